#include "reference_workloads/runtime/step_loop.h"

#include <cstdio>
#include <string>

#include "reference_workloads/runtime/device_memory.h"
#include "reference_workloads/runtime/nvtx_range.h"

namespace oscwl {

std::vector<double> run_steps(const CommonOptions& o, cudaStream_t stream, const std::function<void(int)>& step,
                              bool print_each) {
    Event start(true), end(true);
    std::vector<double> times;
    for (int i = 0; i < o.warmup + o.steps; ++i) {
        const bool measured = i >= o.warmup;
        const int n = measured ? i - o.warmup : i;
        {
            NvtxRange range((measured ? "step " : "warmup ") + std::to_string(n));
            start.record(stream);
            step(i);
            end.record(stream);
            // Synchronising per step keeps step windows apart in a capture
            // and makes each timing one step, not a pipeline of several.
            OSC_CUDA(cudaEventSynchronize(end.get()));
        }
        if (!measured) continue;
        float ms = 0;
        OSC_CUDA(cudaEventElapsedTime(&ms, start.get(), end.get()));
        times.push_back(ms);
        if (print_each) std::printf("step %d: %.3f ms\n", n, static_cast<double>(ms));
    }
    return times;
}

}  // namespace oscwl

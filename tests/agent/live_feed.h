// Rows of the paced fake training job (agent/fake/paced_training.h) as the
// writer thread would see them: every record handed over some time after it
// was complete (CUPTI's buffers), so ranges, launches, kernels and NCCL rows
// of a step arrive interleaved and out of time order. Also the same rows for
// the brute force (live_brute_force.h).
#pragma once

#include "agent/fake/paced_training.h"
#include "tests/agent/live_brute_force.h"

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace osc::agent::test {

struct LiveFeed {
    struct Item {
        int64_t at;  // when the writer thread sees it
        std::function<void(RowSink&)> emit;
        int64_t cpuTime = -1;  // a CPU record (API call, range) of the one thread, at this time
    };
    std::vector<Item> items;
    BruteRows brute;
    uint32_t nextCorrelation = 1;
    uint32_t correlationStride = 1;  // CUPTI's ids count up by one, and wrap

    // Steps [first, first + count); `maxDelayNs` bounds each record's wait
    // for its buffer. Every third step also launches, after its range, a
    // long kernel that runs into the next step's window. `dropKernelOfStep`:
    // that step's first kernel record never arrives (CUPTI lost it).
    void add(const PacedTrainingOptions& o, uint64_t first, uint64_t count, int64_t maxDelayNs, uint32_t seed,
             int64_t dropKernelOfStep = -1) {
        std::mt19937 rng(seed);
        std::uniform_int_distribution<int64_t> delay(0, maxDelayNs);
        static const char* const kCompute = "gemm_bf16_tn";
        static const char* const kComm = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs4K)";
        static const char* const kOptimizer = "multi_tensor_apply_kernel";
        static const char* const kLaunch = "cudaLaunchKernel_v7000";
        std::vector<uint64_t> seq(16, 0);
        const auto kernel = [&](int64_t launch, int64_t start, int64_t end, uint32_t device, uint32_t stream,
                                const char* name, bool comm, bool drop) {
            const uint32_t id = nextCorrelation;
            nextCorrelation += correlationStride;
            ApiCallRow a;
            a.start = launch;
            a.end = launch + 2000;
            a.correlationId = id;
            a.globalTid = 7;
            a.name = kLaunch;
            items.push_back({a.end + delay(rng), [a](RowSink& s) { s.addApiCall(a); }, a.end});
            brute.calls.push_back({a.start, id});
            brute.gpu.push_back({start, end, device, id, comm});
            KernelRow k;
            k.start = start;
            k.end = end;
            k.deviceId = device;
            k.streamId = stream;
            k.correlationId = id;
            k.demangledName = k.shortName = name;
            if (!drop) items.push_back({end + delay(rng), [k](RowSink& s) { s.addKernel(k); }});
            if (comm && o.collectiveBytes > 0) {
                CollectiveRow c;
                c.commHash = 0xFA4E;
                c.rank = static_cast<int32_t>(device);
                c.nranks = o.ranks;
                c.seqNumber = seq[device]++;
                c.func = "AllReduce";
                c.datatype = "ncclBfloat16";
                c.bytes = o.collectiveBytes;
                c.count = c.bytes / 2;
                c.deviceId = device;
                c.enqueue = start - 1000;
                c.gpuStart = start;
                c.gpuEnd = end;
                items.push_back({end + delay(rng), [c](RowSink& s) { s.addCollective(c); }});
                brute.plugin.push_back({device, start, end, c.bytes, c.nranks});
            }
        };
        for (uint64_t n = first; n < first + count; ++n) {
            const PacedStep s = pacedStep(o, n);
            bool dropped = false;
            for (const PacedKernel& k : s.kernels) {
                const bool drop = !dropped && static_cast<int64_t>(n) == dropKernelOfStep;
                dropped = dropped || drop;
                kernel(k.launchNs, k.startNs, k.endNs, k.device, k.stream, k.comm ? kComm : kCompute, k.comm, drop);
            }
            const std::string name = "ProfilerStep#" + std::to_string(n);
            const int64_t rs = s.rangeStartNs, re = s.rangeEndNs;
            items.push_back({re + delay(rng),
                             [name, rs, re](RowSink& sink) {
                                 RangeRow r;
                                 r.start = rs;
                                 r.end = re;
                                 r.text = name;
                                 r.globalTid = 7;
                                 sink.addRange(r);
                             },
                             re});
            brute.steps.push_back({static_cast<int64_t>(n), rs, re});
            if (n % 3 == 0) {  // launched between steps, runs across the next step's window
                const int64_t lag = o.gpuLagNs >= 0 ? o.gpuLagNs : o.stepNs;
                const int64_t t0 = s.rangeStartNs, p = o.stepNs;
                kernel(t0 + p * 97 / 100, t0 + lag + p * 60 / 100, t0 + p + lag + p / 10, 0, 20, kOptimizer, false,
                       false);
            }
        }
    }

    // Hands the items to `sink` in arrival order, calling `tick(now)` every
    // `periodNs` of arrival time.
    void play(RowSink& sink, int64_t periodNs, const std::function<void(int64_t)>& tick) {
        // One thread's records reach CUPTI's buffers in the order it made
        // them: its API calls before the range that ends after them.
        std::vector<Item*> cpu;
        for (Item& i : items)
            if (i.cpuTime >= 0) cpu.push_back(&i);
        std::stable_sort(cpu.begin(), cpu.end(), [](const Item* a, const Item* b) { return a->cpuTime < b->cpuTime; });
        for (size_t k = 1; k < cpu.size(); ++k) cpu[k]->at = std::max(cpu[k]->at, cpu[k - 1]->at);
        std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.at < b.at; });
        int64_t next = items.empty() ? 0 : items.front().at + periodNs;
        for (const Item& i : items) {
            while (i.at >= next) {
                tick(next);
                next += periodNs;
            }
            i.emit(sink);
        }
        tick(next);
    }
};

}  // namespace osc::agent::test

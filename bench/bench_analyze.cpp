// How long analyze() takes on a large synthetic capture: 10M kernels on 8
// streams (6 compute, 2 communication) of one device, with NVTX steps and
// launching API calls. Target: a few seconds on one core (here: <= 5 s).
// By default one kernel in 16 is a collective (a tensor-parallel-like mix;
// DDP has far fewer); --comm-every 4 makes a quarter of them collectives,
// which mostly measures building 2.5M CollectiveInstance records.
//
//   bench_analyze [--kernels N] [--comm-every K] [--target-s S]
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/analysis.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace {

osc::Capture makeCapture(size_t kernels, size_t commEvery) {
    using namespace osc;
    Capture c;
    Process p;
    p.rank = 0;
    p.host = "bench";
    Device& d = p.deviceById(0);
    KernelTable& k = d.kernels;
    k.reserve(kernels);
    const uint32_t gemm = c.strings.intern("ampere_bf16_s16816gemm_256x128_ldg8_f2f_stages_64x3_tn");
    const uint32_t elem = c.strings.intern("void at::native::vectorized_elementwise_kernel<4>()");
    const uint32_t ar = c.strings.intern("void ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs4K)");
    const uint32_t ag = c.strings.intern("void ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgs4K)");
    const uint32_t launch = c.strings.intern("cudaLaunchKernel");

    std::mt19937_64 rng(42);
    // Each stream runs back-to-back kernels with small gaps; streams interleave.
    const int streams = 8;
    std::vector<TimeNs> streamClock(streams, 0);
    TimeNs t = 0;
    const size_t perStep = 10'000;
    for (size_t i = 0; i < kernels; ++i) {
        const bool comm = i % commEvery == commEvery - 1;
        const int s = comm ? 6 + static_cast<int>((i / commEvery) % 2) : static_cast<int>(i % 6);
        const TimeNs dur =
            comm ? 20'000 + static_cast<TimeNs>(rng() % 60'000) : 2'000 + static_cast<TimeNs>(rng() % 20'000);
        TimeNs start = std::max(streamClock[static_cast<size_t>(s)], t) + static_cast<TimeNs>(rng() % 3'000);
        streamClock[static_cast<size_t>(s)] = start + dur;
        t += 1'500;  // launches keep coming
        k.start.push_back(start);
        k.end.push_back(start + dur);
        k.stream.push_back(static_cast<uint32_t>(s + 7));
        k.correlation.push_back(static_cast<uint32_t>(i + 1));
        const uint32_t name = comm ? (i % 3 ? ar : ag) : (i % 2 ? gemm : elem);
        k.name.push_back(name);
        k.shortName.push_back(name);
        for (auto* col : {&k.gridX, &k.gridY, &k.gridZ, &k.blockX, &k.blockY, &k.blockZ, &k.registersPerThread,
                          &k.staticSharedMemory, &k.dynamicSharedMemory, &k.graphId})
            col->push_back(1);
        k.graphNodeId.push_back(0);
        // The launching API call, and one NVTX step every perStep kernels.
        p.apiCalls.start.push_back(static_cast<TimeNs>(i) * 1'500);
        p.apiCalls.end.push_back(static_cast<TimeNs>(i) * 1'500 + 800);
        p.apiCalls.globalTid.push_back(1);
        p.apiCalls.correlation.push_back(static_cast<uint32_t>(i + 1));
        p.apiCalls.name.push_back(launch);
        p.apiCalls.returnValue.push_back(0);
        p.apiCalls.kind.push_back(ApiKind::Runtime);
        if (i % perStep == 0) {
            p.ranges.start.push_back(static_cast<TimeNs>(i) * 1'500);
            p.ranges.end.push_back(static_cast<TimeNs>(i + perStep) * 1'500);
            p.ranges.name.push_back(c.strings.intern("ProfilerStep#" + std::to_string(i / perStep)));
            p.ranges.globalTid.push_back(1);
            p.ranges.domain.push_back(kNoId);
            p.ranges.category.push_back(0);
            p.ranges.color.push_back(0);
            p.ranges.kind.push_back(RangeKind::PushPop);
            p.ranges.onGpu.push_back(0);
        }
    }
    c.processes.push_back(std::move(p));
    c.finalize();  // sorts the kernels by start, as every reader does
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    size_t kernels = 10'000'000, commEvery = 16;
    double target = 5.0;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--kernels") && i + 1 < argc)
            kernels = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--comm-every") && i + 1 < argc)
            commEvery = std::max<size_t>(1, std::strtoull(argv[++i], nullptr, 10));
        else if (!std::strcmp(argv[i], "--target-s") && i + 1 < argc)
            target = std::atof(argv[++i]);
        else {
            std::printf(
                "usage: bench_analyze [--kernels N] [--comm-every K] [--target-s S]\n"
                "Times osc::analyze() on a synthetic capture with N kernels on 8 streams.\n");
            return std::strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    std::printf("building a synthetic capture: %zu kernels on 8 streams, 1 in %zu a collective...\n", kernels,
                commEvery);
    std::fflush(stdout);
    const osc::Capture c = makeCapture(kernels, commEvery);
    const auto t0 = std::chrono::steady_clock::now();
    const osc::Analysis a = osc::analyze(c);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& d = a.devices.at(0);
    std::printf(
        "analyze: %.2f s for %zu kernels (%.1f M kernels/s); %zu steps, %zu comm ops, "
        "overlap ratio %.3f\n",
        s, kernels, static_cast<double>(kernels) / s / 1e6, d.steps.size(), d.collectives.size(),
        d.totals.overlap_ratio.value_or(0));
    std::printf("target: <= %.1f s on one core: %s\n", target, s <= target ? "MET" : "NOT MET");
    return 0;
}

// Capture writer throughput: N kernel records (default 10 million) on 8
// streams through CaptureWriter, committed in batches as the agent does.
// Target: 2 million kernel records per second sustained (the agent's
// writer-thread budget, docs/design.md section 7).
//
//   bench_capture_write [kernels] [output.sqlite|-] [launches]
//
// `launches`: how many distinct launch configurations (stream, name, grid...)
// the kernels share (default 8). Each distinct one is a row of
// OVERLAPSCOPE_KERNEL_LAUNCH; 0 makes every kernel its own, the worst case
// (a job whose grid changes with every launch).
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/schema.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
    const long long n = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
    const bool userPath = argc > 2 && std::string(argv[2]) != "-";
    const std::string path =
        userPath ? argv[2] : (std::filesystem::temp_directory_path() / "osc_bench_capture_write.sqlite").string();
    const long long launches = argc > 3 ? std::atoll(argv[3]) : 8;
    constexpr double kTarget = 2e6;
    constexpr long long kBatch = 1 << 20;  // about half a second of records at the target rate

    const char* names[] = {
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>, true, false>(Params)",
    };
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double>(b - a).count();
    };
    auto cpuNow = [] { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; };
    const auto t0 = Clock::now();
    const double cpu0 = cpuNow();
    Clock::time_point t1;
    double cpu1 = 0;
    try {
        // A path given by the user is never replaced; the default scratch file is.
        auto w = osc::CaptureWriter::create(path, 1'700'000'000'000'000'000LL, !userPath);
        const uint64_t gpid = osc::schema::packGlobalPid(4242);
        osc::KernelRow r;
        r.globalPid = gpid;
        r.gridX = 108;
        r.gridY = 1;
        r.gridZ = 1;
        r.blockX = 256;
        r.blockY = 1;
        r.blockZ = 1;
        r.registersPerThread = 64;
        r.staticSharedMemory = 16384;
        for (long long i = 0; i < n; ++i) {
            const auto stream = static_cast<uint32_t>(i % 8);
            r.start = 1'000'000 + i * 1000;
            r.end = r.start + 800 + (i % 7) * 50;
            r.streamId = 7 + stream;
            r.correlationId = static_cast<uint32_t>(i + 1);
            r.demangledName = names[stream % 4];
            r.shortName = names[stream % 4];
            // Launch configurations beyond the 8 streams differ in their grid.
            r.gridX = static_cast<uint32_t>(launches > 0 ? 108 + (i % launches) / 8 : 108 + i);
            w->addKernel(r);
            if ((i + 1) % kBatch == 0) w->commit();
        }
        w->commit();
        t1 = Clock::now();
        cpu1 = cpuNow();
        w->close();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_capture_write: %s\n", e.what());
        return 2;
    }
    const double s = seconds(t0, t1);
    const double rate = static_cast<double>(n) / s;
    const double cpuRate = static_cast<double>(n) / (cpu1 - cpu0);
    const auto bytes = std::filesystem::file_size(path);
    // CPU time too: on a shared machine the wall time says more about the neighbours.
    std::printf("launch configurations: %lld\n", launches > 0 ? std::max(launches, 8LL) : n);
    std::printf(
        "capture writer: %lld kernel records in %.2f s (%.2f s CPU) = %.2f M records/s "
        "(%.2f M/s per CPU second) (target >= %.1f M/s): %s\n",
        n, s, cpu1 - cpu0, rate / 1e6, cpuRate / 1e6, kTarget / 1e6, rate >= kTarget ? "PASS" : "FAIL");
    std::printf("close() (indexes, checkpoint): %.2f s (%.2f s CPU)\n", seconds(t1, Clock::now()), cpuNow() - cpu1);
    std::printf("file: %s, %.1f bytes per kernel record (indexes included)\n", path.c_str(),
                static_cast<double>(bytes) / static_cast<double>(n));
    if (!userPath) std::filesystem::remove(path);
    return 0;
}

// SQLite reader throughput and memory: reads a capture into the model.
// Without an argument it first writes 10 million kernels on 8 streams (the
// report benchmark's size) to a temporary file. Budget: the whole report on
// such a capture takes under 15 s and 2 GB on 2 cores; reading gets half the
// time (7.5 s) and must stay under the memory limit on its own.
//
// Reads twice: the full model, then as `overlapscope report` does (without
// kernel launch details, LoadOptions::launchDetails off); the budget applies
// to the second.
//
//   bench_capture_read [capture.sqlite]
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_reader.h"

#include <sys/resource.h>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>

namespace {

void writeSample(const std::string& path, long long n) {
    auto w = osc::CaptureWriter::create(path, 1'700'000'000'000'000'000LL, true);
    const char* names[] = {"void gemm_kernel<128, 128>(Params)",
                           "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)"};
    osc::KernelRow r;
    r.globalPid = osc::schema::packGlobalPid(4242);
    r.gridX = 108;
    r.gridY = 1;
    r.gridZ = 1;
    r.blockX = 256;
    r.blockY = 1;
    r.blockZ = 1;
    const uint32_t ids[] = {w->internString(names[0]), w->internString(names[1])};
    for (long long i = 0; i < n; ++i) {
        const auto stream = static_cast<uint32_t>(i % 8);
        r.start = i * 125;
        r.end = r.start + 900;
        r.streamId = 7 + stream;
        r.correlationId = static_cast<uint32_t>(i + 1);
        r.demangledNameId = r.shortNameId = ids[stream == 7];
        w->addKernel(r);
        if ((i + 1) % (1 << 20) == 0) w->commit();
    }
    w->close();
}

double peakRssGb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB
}

}  // namespace

int main(int argc, char** argv) {
    constexpr long long kKernels = 10'000'000;
    constexpr double kBudgetS = 7.5, kBudgetGb = 2.0;
    std::string path;
    bool generated = false;
    try {
        if (argc > 1) {
            path = argv[1];
        } else {
            path = (std::filesystem::temp_directory_path() / "osc_bench_capture_read.sqlite").string();
            std::printf("writing %lld kernels to %s ...\n", kKernels, path.c_str());
            writeSample(path, kKernels);
            generated = true;
        }
        // The report's read first: peak RSS only grows, so this order keeps
        // its figure honest.
        for (const bool details : {false, true}) {
            const double rssBefore = peakRssGb();
            const auto t0 = std::chrono::steady_clock::now();
            const std::clock_t cpu0 = std::clock();
            osc::Capture capture;
            osc::LoadOptions options;
            options.launchDetails = details;
            readSqliteCapture(path, options, capture);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            // CPU time too: on a shared machine the wall time says more about the neighbours.
            const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
            const auto kernels = capture.kernelCount();
            const double rss = peakRssGb();
            const bool ok = s <= kBudgetS && rss <= kBudgetGb;
            std::printf(
                "capture reader (%s): %zu kernels in %.2f s (%.2f s CPU) = %.2f M "
                "kernels/s, peak RSS %.2f GB (%.2f GB before reading)",
                details ? "full model, launch details" : "as the report reads", kernels, s, cpu,
                static_cast<double>(kernels) / s / 1e6, rss, rssBefore);
            if (details)
                std::printf("\n");
            else
                std::printf("; budget %.1f s and %.1f GB: %s\n", kBudgetS, kBudgetGb, ok ? "PASS" : "FAIL");
            std::fflush(stdout);
        }
    } catch (const osc::CaptureError& e) {
        std::fprintf(stderr, "bench_capture_read: %s\n", e.what());
        return 2;
    }
    if (generated) std::filesystem::remove(path);
    return 0;
}

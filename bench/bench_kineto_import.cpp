// Import speed and memory of the Kineto reader on a ~1 GB PyTorch profiler
// trace. Targets (issue 4): >= 100 MB/s on 2 cores, peak memory < 1.5x the
// in-memory event model.
//
//   bench_kineto_import [--size-mb N] [--trace PATH] [--gzip]
// The trace is generated once (default: kineto_bench_<N>mb.json in the
// current directory) and reused by later runs.
#include "analyzer/import/kineto_reader.h"

#include <sys/resource.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

// Current resident set (VmRSS) and peak (VmHWM) in bytes, from /proc.
uint64_t procStatusBytes(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const size_t n = std::strlen(field);
    while (std::getline(in, line))
        if (line.compare(0, n, field) == 0) return std::stoull(line.substr(n + 1)) * 1024;
    return 0;
}

double cpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

template <typename T>
uint64_t bytesOf(const std::vector<T>& v) {
    return v.size() * sizeof(T);
}

uint64_t modelBytes(const osc::Capture& c) {
    uint64_t n = 0;
    for (const auto& p : c.processes) {
        for (const auto& d : p.devices) {
            const auto& k = d.kernels;
            n += bytesOf(k.start) + bytesOf(k.end) + bytesOf(k.stream) + bytesOf(k.correlation) + bytesOf(k.name) +
                 bytesOf(k.shortName) + bytesOf(k.gridX) * 6 + bytesOf(k.registersPerThread) * 3 + bytesOf(k.graphId) +
                 bytesOf(k.graphNodeId);
            const auto& m = d.copies;
            n += bytesOf(m.start) * 2 + bytesOf(m.stream) * 2 + bytesOf(m.bytes) + bytesOf(m.copyKind) * 3 +
                 bytesOf(m.srcDevice) * 2;
            n += d.memsets.size() * (8 * 2 + 4 * 2 + 8 + 4);
            n += d.syncs.size() * (8 * 2 + 4 * 3 + 1);
        }
        n += p.apiCalls.size() * (8 * 2 + 8 + 4 + 4 + 4 + 1);
        n += p.ranges.size() * (8 * 2 + 4 + 8 + 4 * 3 + 1 + 1);
    }
    return n;
}

// Writes a trace shaped like a real one: per launch a cuda_runtime call, a
// cpu_op around it (ignored by the reader) and the kernel with Kineto's args.
void generate(const std::string& path, uint64_t targetBytes, bool gzip) {
    std::FILE* plain = gzip ? nullptr : std::fopen(path.c_str(), "wb");
    gzFile gz = gzip ? gzopen(path.c_str(), "wb1") : nullptr;
    auto put = [&](const char* s, size_t len) {
        if (gz)
            gzwrite(gz, s, static_cast<unsigned>(len));
        else
            std::fwrite(s, 1, len, plain);
    };
    std::mt19937_64 rng(1);
    const char* names[] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
        "segment_k_off_kernel__5x_cublas",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
        "cutlass::bfloat16_t> >(Flash_fwd_params)"};
    std::string head =
        "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", "
        "\"rank\": 0, \"world_size\": 8},\n  \"baseTimeNanoseconds\": "
        "1700000000000000000,\n  \"traceEvents\": [\n";
    put(head.data(), head.size());
    uint64_t written = head.size(), corr = 1;
    double cpuUs = 1718000000000.0;
    int64_t gpuNs = 1718000000000000LL + 50000;
    char buf[2048];
    bool first = true;
    while (written < targetBytes) {
        const int stream = rng() % 4 == 0 ? 13 : 7;
        const char* name = names[rng() % 4];
        const int64_t durNs = 1000 + static_cast<int64_t>(rng() % 200000);
        gpuNs += static_cast<int64_t>(rng() % 3000);
        int len = std::snprintf(
            buf, sizeof buf,
            "%s    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 4242, "
            "\"tid\": 4242, \"ts\": %.3f, \"dur\": 12.345, \"args\": {\"External id\": %llu, "
            "\"Record function id\": 0, \"Ev Idx\": %llu}},\n"
            "    {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
            "4242, \"tid\": 4242, \"ts\": %.3f, \"dur\": 4.112, \"args\": {\"External id\": %llu, "
            "\"cbid\": 211, \"correlation\": %llu}},\n"
            "    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
            "\"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {\"External id\": %llu, \"queued\": 0, "
            "\"device\": 0, \"context\": 1, \"stream\": %d, \"correlation\": %llu, \"registers per "
            "thread\": 168, \"shared memory\": 213248, \"blocks per SM\": 0.984848, \"warps per SM\": "
            "7.878788, \"grid\": [130, 1, 1], \"block\": [384, 1, 1], \"est. achieved occupancy %%\": "
            "0}}",
            first ? "" : ",\n", cpuUs, static_cast<unsigned long long>(corr), static_cast<unsigned long long>(corr),
            cpuUs + 2.5, static_cast<unsigned long long>(corr), static_cast<unsigned long long>(corr), name, stream,
            static_cast<long long>(gpuNs / 1000), static_cast<long long>(gpuNs % 1000),
            static_cast<long long>(durNs / 1000), static_cast<long long>(durNs % 1000),
            static_cast<unsigned long long>(corr), stream, static_cast<unsigned long long>(corr));
        put(buf, static_cast<size_t>(len));
        written += static_cast<uint64_t>(len);
        first = false;
        ++corr;
        cpuUs += 15.0;
    }
    const std::string tail = "\n  ]\n}\n";
    put(tail.data(), tail.size());
    if (gz)
        gzclose(gz);
    else
        std::fclose(plain);
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t sizeMb = 1024;
    std::string trace;
    bool gzip = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--size-mb" && i + 1 < argc)
            sizeMb = std::stoull(argv[++i]);
        else if (a == "--trace" && i + 1 < argc)
            trace = argv[++i];
        else if (a == "--gzip")
            gzip = true;
        else {
            std::printf("usage: bench_kineto_import [--size-mb N] [--trace PATH] [--gzip]\n");
            return a == "--help" ? 0 : 2;
        }
    }
    if (trace.empty()) trace = "kineto_bench_" + std::to_string(sizeMb) + "mb.json" + (gzip ? ".gz" : "");
    if (!std::filesystem::exists(trace)) {
        std::printf("generating %s (%llu MB of JSON)...\n", trace.c_str(), static_cast<unsigned long long>(sizeMb));
        generate(trace, sizeMb << 20, gzip);
    }
    const double fileMb = static_cast<double>(std::filesystem::file_size(trace)) / (1 << 20);
    // Speed is JSON bytes parsed per second, also for .gz (measured by an
    // untimed decompression pass first).
    double jsonMb = fileMb;
    if (gzip || (trace.size() > 3 && trace.compare(trace.size() - 3, 3, ".gz") == 0)) {
        gzFile f = gzopen(trace.c_str(), "rb");
        std::vector<char> chunk(1 << 20);
        uint64_t total = 0;
        for (int got; (got = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0;)
            total += static_cast<uint64_t>(got);
        gzclose(f);
        jsonMb = static_cast<double>(total) / (1 << 20);
    }

    const uint64_t rssBefore = procStatusBytes("VmRSS:");
    osc::Capture capture;
    const double cpu0 = cpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    osc::readKinetoTrace(trace, {}, capture);
    capture.alignProcesses();
    capture.finalize();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpuSeconds() - cpu0;
    const uint64_t peak = procStatusBytes("VmHWM:");
    const double model = static_cast<double>(modelBytes(capture));
    const double used = static_cast<double>(peak - rssBefore);

    std::printf("trace: %s, %.1f MB on disk, %.1f MB of JSON, %zu kernels\n", trace.c_str(), fileMb, jsonMb,
                capture.kernelCount());
    // The reader is single-threaded; on a shared machine the wall clock also
    // counts time other processes held the core, so CPU time is shown too.
    const double mbps = jsonMb / secs, cpuMbps = jsonMb / cpu;
    double load = 0;
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = 0;
        std::fclose(f);
    }
    const char* verdict = mbps >= 100      ? "MET"
                          : cpuMbps >= 100 ? "NOT MET on the wall clock, MET per CPU second "
                                             "(the machine was busy)"
                                           : "NOT MET";
    std::printf(
        "import: %.2f s wall, %.2f s CPU: %.1f MB/s wall, %.1f MB/s per CPU second, "
        "load average %.1f (target >= 100 MB/s): %s\n",
        secs, cpu, mbps, cpuMbps, load, verdict);
    std::printf(
        "memory: event model %.1f MB, peak RSS growth %.1f MB = %.2fx the model "
        "(target < 1.5x): %s\n",
        model / (1 << 20), used / (1 << 20), used / model, used < 1.5 * model ? "MET" : "NOT MET");
    return 0;
}

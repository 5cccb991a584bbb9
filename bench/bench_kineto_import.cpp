// The PyTorch trace reader against the hardware (issue 46): `overlapscope
// report --format json` on one large trace, end to end as users run it, in a
// child process, round by round against
//  - the limit: simdjson's On-Demand parser (Debian's libsimdjson-dev) reading
//    the same JSON and doing the least a reader can (count the events, sum
//    their durations) on one core, in a child process too;
//  - with --baseline, an earlier overlapscope binary on the same trace.
// Targets: >= 700 MB/s of JSON end to end on a 2-core machine, peak memory at
// most 0.15x the JSON, at least 0.7x the limit's rate.
//
//   bench_kineto_import [--size-mb N | --trace PATH] [--gzip] [--rounds R] [--dir DIR]
//                       [--baseline OLD_OVERLAPSCOPE] [--cli PATH]
//                       [--target-mbps 700] [--target-memory 0.15] [--target-limit 0.7]
// A generated trace (kineto_bench_<N>mb.json[.gz] in --dir, by default
// osc-bench-kineto-<uid> in the temporary directory, never the working
// directory, which is usually a checkout) is written once and reused. For a .json.gz the rate is JSON bytes per second
// too, and the limit parses the inflated JSON (inflated once, untimed).
#include "bench/paired.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#ifdef OSC_HAVE_SIMDJSON
#include <simdjson.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace {

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

bool isGzip(const std::string& path) { return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0; }

// The inflated bytes of a .gz (into `plain` when given), else the file's size.
uint64_t jsonBytes(const std::string& path, const std::string& plain) {
    if (!isGzip(path)) return std::filesystem::file_size(path);
    gzFile f = gzopen(path.c_str(), "rb");
    std::FILE* out = plain.empty() ? nullptr : std::fopen(plain.c_str(), "wb");
    std::vector<char> chunk(1 << 20);
    uint64_t total = 0;
    for (int got; (got = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0;) {
        total += static_cast<uint64_t>(got);
        if (out) std::fwrite(chunk.data(), 1, static_cast<size_t>(got), out);
    }
    gzclose(f);
    if (out) std::fclose(out);
    return total;
}

#ifdef OSC_HAVE_SIMDJSON
// The limit: load the file, then walk traceEvents counting events and
// summing "dur". Returns the parse's own seconds (the load excluded), < 0 on
// failure.
double simdjsonWalk(const std::string& path, uint64_t& events) {
    simdjson::padded_string json;
    if (simdjson::padded_string::load(path).get(json)) return -1;
    const auto t0 = std::chrono::steady_clock::now();
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    if (parser.iterate(json).get(doc)) return -1;
    double durations = 0;
    events = 0;
    simdjson::ondemand::object root;
    if (doc.get_object().get(root)) return -1;
    for (auto field : root) {
        std::string_view key;
        if (field.unescaped_key().get(key)) return -1;
        if (key != "traceEvents") continue;
        simdjson::ondemand::array array;
        if (field.value().get_array().get(array)) return -1;
        for (auto element : array) {
            simdjson::ondemand::object event;
            if (element.get_object().get(event)) return -1;
            ++events;
            double dur = 0;
            if (!event.find_field_unordered("dur").get_double().get(dur)) durations += dur;
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return durations >= 0 ? seconds : -1;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    uint64_t sizeMb = 1024;
    std::string trace, baseline, dir, cli = OSC_CLI_PATH;
    bool gzip = false;
    int rounds = 5;
    double targetMbps = 700, targetMemory = 0.15, targetLimit = 0.7;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_kineto_import: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--size-mb")
            sizeMb = std::stoull(next());
        else if (a == "--trace")
            trace = next();
        else if (a == "--gzip")
            gzip = true;
        else if (a == "--rounds")
            rounds = std::stoi(next());
        else if (a == "--dir")
            dir = next();
        else if (a == "--baseline")
            baseline = next();
        else if (a == "--cli")
            cli = next();
        else if (a == "--target-mbps")
            targetMbps = std::stod(next());
        else if (a == "--target-memory")
            targetMemory = std::stod(next());
        else if (a == "--target-limit")
            targetLimit = std::stod(next());
        else {
            std::printf(
                "usage: bench_kineto_import [--size-mb N | --trace PATH] [--gzip] [--rounds R] [--dir DIR] "
                "[--baseline OLD_OVERLAPSCOPE] [--cli PATH] [--target-mbps X] [--target-memory X] "
                "[--target-limit X]\n");
            return a == "--help" ? 0 : 2;
        }
    }
    if (trace.empty()) {
        if (dir.empty())
            dir = (std::filesystem::temp_directory_path() / ("osc-bench-kineto-" + std::to_string(getuid()))).string();
        std::filesystem::create_directories(dir);
        trace = dir + "/kineto_bench_" + std::to_string(sizeMb) + "mb.json" + (gzip ? ".gz" : "");
    }
    if (!std::filesystem::exists(trace)) {
        std::printf("generating %s (%llu MB of JSON)...\n", trace.c_str(), static_cast<unsigned long long>(sizeMb));
        std::fflush(stdout);
        generate(trace, sizeMb << 20, isGzip(trace));
    }
    // The limit reads plain JSON: a .gz is inflated once, beside it.
    std::string plain = trace;
    if (isGzip(trace)) {
        plain = trace.substr(0, trace.size() - 3) + ".inflated-for-limit";
        if (!std::filesystem::exists(plain)) jsonBytes(trace, plain);
    }
    const double fileMb = static_cast<double>(std::filesystem::file_size(trace)) / 1e6;
    const double jsonMb = static_cast<double>(jsonBytes(trace, "")) / 1e6;

    // The limit's parse seconds, written by the child into memory both see.
    auto* shared = static_cast<double*>(
        ::mmap(nullptr, sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    std::vector<double> parseSeconds;
    std::vector<osc::bench::Side> sides;
    sides.push_back({"overlapscope report", [&] {
                         return osc::bench::runProgram({cli, "report", "--format", "json", trace});
                     }});
#ifdef OSC_HAVE_SIMDJSON
    sides.push_back({"limit: simdjson", [&] {
                         *shared = -1;
                         auto r = osc::bench::runInChild([&] {
                             uint64_t events = 0;
                             *shared = simdjsonWalk(plain, events);
                             return *shared >= 0 && events > 0;
                         });
                         parseSeconds.push_back(*shared);
                         return r;
                     }});
#endif
    if (!baseline.empty())
        sides.push_back({"baseline", [&] {
                             return osc::bench::runProgram({baseline, "report", "--format", "json", trace});
                         }});

    std::printf("trace: %s, %.1f MB on disk, %.1f MB of JSON; %ld cores online; %d rounds\n", trace.c_str(), fileMb,
                jsonMb, sysconf(_SC_NPROCESSORS_ONLN), rounds);
    std::fflush(stdout);
    const osc::bench::PairedRuns runs(sides, rounds);
    std::printf("load average %.1f at the start, %.1f at the end\n", runs.loadBefore(), runs.loadAfter());
    std::printf("%-22s %10s %10s %12s %10s\n", "median of the rounds", "wall s", "CPU s", "peak MB", "MB/s");
    for (size_t s = 0; s < runs.sides(); ++s) {
        const double wall = runs.median(s, &osc::bench::ChildRun::wall);
        std::printf("%-22s %10.3f %10.3f %12.1f %10.1f%s\n", runs.name(s).c_str(), wall,
                    runs.median(s, &osc::bench::ChildRun::cpu), runs.median(s, &osc::bench::ChildRun::peakMb),
                    jsonMb / wall, runs.ok(s) ? "" : "  (a run FAILED)");
    }
    bool pass = runs.ok(0);
    const double ours = jsonMb / runs.median(0, &osc::bench::ChildRun::wall);
    const double memory = runs.median(0, &osc::bench::ChildRun::peakMb) * (1 << 20) / 1e6 / jsonMb;
    std::printf("end to end: %.1f MB/s of JSON (target >= %.0f): %s\n", ours, targetMbps,
                ours >= targetMbps ? "PASS" : "FAIL");
    std::printf("memory: peak %.3fx the JSON (target <= %.2fx): %s\n", memory, targetMemory,
                memory <= targetMemory ? "PASS" : "FAIL");
    pass = pass && ours >= targetMbps && memory <= targetMemory;
#ifdef OSC_HAVE_SIMDJSON
    {
        // Per round: our wall against the limit's parse alone (the stricter
        // figure), and against its load + parse.
        std::vector<double> parseRatio;
        const auto& ourRuns = runs.runs(0);
        for (size_t r = 0; r < ourRuns.size() && r < parseSeconds.size(); ++r)
            if (parseSeconds[r] > 0) parseRatio.push_back(parseSeconds[r] / ourRuns[r].wall);
        const double limitParse = osc::bench::median(parseSeconds);
        const auto [lo, hi] = osc::bench::medianInterval(parseRatio);
        const double ratio = osc::bench::median(parseRatio);
        const auto withLoad = runs.ratio(1, 0, &osc::bench::ChildRun::wall);
        std::printf("limit: simdjson parses at %.1f MB/s on one core (%.1f MB/s with loading the file)\n",
                    jsonMb / limitParse, jsonMb / runs.median(1, &osc::bench::ChildRun::wall));
        std::printf(
            "ours against the limit: %.2fx its parse rate [95%% interval %.2f, %.2f] (target >= %.2f): %s; "
            "%.2fx with its load\n",
            ratio, lo, hi, targetLimit, ratio >= targetLimit ? "PASS" : "FAIL", withLoad.median);
        pass = pass && ratio >= targetLimit;
    }
#else
    std::printf("limit: not built (simdjson was not found at configure time)\n");
#endif
    if (!baseline.empty()) {
        const size_t b = runs.sides() - 1;
        const auto t = runs.ratio(0, b, &osc::bench::ChildRun::wall);
        const auto m = runs.ratio(0, b, &osc::bench::ChildRun::peakMb);
        std::printf(
            "against %s: %.1f MB/s; time %.2fx [%.2f, %.2f], peak memory %.2fx [%.2f, %.2f] (this / baseline)\n",
            baseline.c_str(), jsonMb / runs.median(b, &osc::bench::ChildRun::wall), t.median, t.low, t.high, m.median,
            m.low, m.high);
    }
    std::printf("%s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}

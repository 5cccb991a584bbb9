// The agent's NCCL plugin under a 2D-parallel rank's traffic, without a GPU
// (issue 47): a 2x2 mesh's rank runs 4 communicators, each launched on from
// a main and an autograd thread and reported on by its own proxy thread;
// add preemption at random points, NCCL 2.28.9's proxy race (a KernelCh stop
// naming a channel stopped long ago, then the start of the channel meant),
// operations stopped twice and communicators destroyed mid-stream
// (tests/agent/nccl_stress.h).
//
//   bench_nccl_plugin_stress [--agent LIB] [--seconds S] [--seed N] [--communicators N]
//
// It loads the agent library with dlopen and plays the job on its exported
// ncclProfiler_v5, as NCCL does when NCCL_PROFILER_PLUGIN names it (the
// agent starts from the plugin's `init`, no CUDA). The agent serves live
// metrics into a file of a temporary directory; at the end the program reads
// overlapscope_agent_ignored_calls_total from it and compares the calls the
// agent refused with the calls the job made anomalous on purpose.
//
// Target: no fault (a fault ends this process; the agent's crash report
// names the frame), no sanitizer report when the agent and this program are
// built with one (docs/benchmarks.md runs it for minutes under ASan and
// TSan), and refused calls between the anomalous calls made and those plus
// the calls that raced a finalize. Exit status 0 when met, 1 when not, 2 for
// bad arguments.
#include "tests/agent/nccl_stress.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;

int usage(const char* why) {
    std::fprintf(stderr,
                 "bench_nccl_plugin_stress: %s\n"
                 "usage: bench_nccl_plugin_stress [--agent LIB] [--seconds S] [--seed N] [--communicators N]\n",
                 why);
    return 2;
}

// reason -> value of overlapscope_agent_ignored_calls_total in a Prometheus text.
std::map<std::string, double> ignoredCalls(const std::string& text) {
    std::map<std::string, double> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("overlapscope_agent_ignored_calls_total{", 0) != 0) continue;
        const auto at = line.find("reason=\"");
        const auto close = line.rfind('}');
        if (at == std::string::npos || close == std::string::npos) continue;
        const auto from = at + 8;
        out[line.substr(from, line.find('"', from) - from)] = std::strtod(line.c_str() + close + 1, nullptr);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string agent = OSC_FAKE_AGENT;
    osc::agent::test::StressOptions options;
    options.seconds = 60;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf(
                "bench_nccl_plugin_stress: the agent's NCCL plugin under a 2x2 mesh rank's traffic (4 "
                "communicators, main + autograd + proxy threads, preemption, stale KernelCh stops, double stops, "
                "communicators destroyed mid-stream), loaded with dlopen as NCCL loads it.\n"
                "  --agent LIB          agent library (default: the fake agent of this build)\n"
                "  --seconds S          how long (default 60)\n"
                "  --seed N             random seed (default 1)\n"
                "  --communicators N    communicators (default 4)\n");
            return 0;
        }
        if (i + 1 >= argc) return usage(("missing value for " + a).c_str());
        const char* v = argv[++i];
        char* end = nullptr;
        if (a == "--agent") {
            agent = v;
        } else if (a == "--seconds") {
            options.seconds = std::strtod(v, &end);
            if (*end || !(options.seconds > 0 && options.seconds <= 86400)) return usage("--seconds: 0 to 86400");
        } else if (a == "--seed") {
            options.seed = std::strtoull(v, &end, 10);
            if (*end) return usage("--seed: a whole number");
        } else if (a == "--communicators") {
            options.communicators = static_cast<int>(std::strtol(v, &end, 10));
            if (*end || options.communicators < 1 || options.communicators > 64)
                return usage("--communicators: 1 to 64");
        } else {
            return usage(("unknown option " + a).c_str());
        }
    }
    static char dirTemplate[] = "/tmp/osc-nccl-stress-XXXXXX";
    if (!mkdtemp(dirTemplate)) return usage("cannot create a temporary directory");
    const fs::path dir = dirTemplate;
    // Registered before the agent registers its own: runs after the agent has
    // closed everything at exit.
    std::atexit([] {
        std::error_code ec;
        fs::remove_all(dirTemplate, ec);
    });
    const fs::path metrics = dir / "agent.prom";
    setenv("OVERLAPSCOPE_OUTPUT_DIR", dir.c_str(), 1);
    setenv("OVERLAPSCOPE_METRICS_FILE", metrics.c_str(), 1);
    setenv("OVERLAPSCOPE_METRICS_PERIOD_MS", "50", 1);
    setenv("OVERLAPSCOPE_CONTROL", "0", 1);
    setenv("OVERLAPSCOPE_DORMANT", "1", 1);       // no capture file: the live stream carries the metrics
    setenv("OVERLAPSCOPE_FAKE_RATE", "2000", 0);  // the fake GPU's records: some, not a flood
    // The live metrics only carry the counts here: few rows held for steps,
    // so that closing a step never costs more than the plugin's traffic.
    setenv("OVERLAPSCOPE_LIVE_MAX_ROWS", "1000", 0);

    void* lib = dlopen(agent.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) return usage(dlerror());
    auto* table = static_cast<ncclProfiler_v5_t*>(dlsym(lib, "ncclProfiler_v5"));
    if (!table) return usage(("no ncclProfiler_v5 in " + agent).c_str());
    const osc::agent::test::NcclPlugin plugin(*table);

    std::printf("bench_nccl_plugin_stress: %s, %d communicators, %.0f s, seed %llu\n", agent.c_str(),
                options.communicators, options.seconds, static_cast<unsigned long long>(options.seed));
    std::fflush(stdout);
    const auto begin = std::chrono::steady_clock::now();
    const osc::agent::test::StressTally t = osc::agent::test::runNcclStress(options, [&](uint64_t commHash) {
        return std::make_unique<osc::agent::test::FakeNcclComm>(plugin, commHash, 4, 1);
    });
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    // The agent writes its metrics every 50 ms from a thread of its own; on a
    // loaded machine that thread may run seconds late, so the file is read
    // until it holds every refused call or 20 s have passed.
    std::map<std::string, double> refused;
    double calls = 0;
    for (const auto waitUntil = std::chrono::steady_clock::now() + std::chrono::seconds(20);;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::ifstream in(metrics);
        std::stringstream text;
        text << in.rdbuf();
        refused = ignoredCalls(text.str());
        calls = 0;
        for (const auto& [reason, n] : refused)
            if (reason.rfind("nccl_", 0) == 0 && reason != "nccl_orphan_channel") calls += n;
        if (calls >= static_cast<double>(t.definite) || std::chrono::steady_clock::now() > waitUntil) break;
    }

    std::printf("  launches %llu, operations %llu, channels %llu in %.1f s (%.0f launches/s)\n",
                static_cast<unsigned long long>(t.launches), static_cast<unsigned long long>(t.operations),
                static_cast<unsigned long long>(t.channels), took, static_cast<double>(t.launches) / took);
    std::printf("  injected: %llu stale KernelCh stops, %llu double stops, %llu communicators destroyed\n",
                static_cast<unsigned long long>(t.staleStops), static_cast<unsigned long long>(t.doubleStops),
                static_cast<unsigned long long>(t.destroyed));
    std::printf("  anomalous calls made: %llu, racing a finalize: %llu\n", static_cast<unsigned long long>(t.definite),
                static_cast<unsigned long long>(t.racing));
    std::printf("  refused by the agent (live metric):");
    for (const auto& [reason, n] : refused)
        if (n > 0) std::printf(" %s %.0f", reason.c_str(), n);
    std::printf("\n");
    const bool counted = !refused.empty() && calls >= static_cast<double>(t.definite) &&
                         calls <= static_cast<double>(t.definite + t.racing);
    std::printf("  faults: 0 (target 0); refused calls %.0f, target %llu to %llu: %s\n", calls,
                static_cast<unsigned long long>(t.definite), static_cast<unsigned long long>(t.definite + t.racing),
                counted ? "met" : "MISSED");
    std::fflush(stdout);
    return counted ? 0 : 1;
}

// Many ranks in one process (issue 16): N ranks x about K kernels each,
// analysed by the old all-in-memory path (analyze(loadCaptures())) and by
// analyzeInputs with 1 and 2 workers, each in a child process so that its
// peak RSS is its own. Targets: analyzeInputs' peak stays within 1.5x from
// the smallest to the largest N, and 2 workers are faster than 1.
//
//   bench_multirank [--ranks 64,256,1024] [--layers L] [--steps S] [--dir DIR]
// Jobs are generated once under DIR (default: bench_multirank_jobs here).
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/pipeline/analyze_inputs.h"
#include "analyzer/synth/workload_synth.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Run {
    double wall = 0, cpu = 0, peakGb = 0;
    size_t devices = 0;
};

// Runs `work` in a child; its wall time, CPU time and peak RSS.
template <typename Work>
Run inChild(Work work) {
    int pipeFd[2];
    if (::pipe(pipeFd) != 0) std::exit(2);
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(pipeFd[0]);
        const size_t devices = work();
        if (::write(pipeFd[1], &devices, sizeof devices) != sizeof devices) std::_Exit(3);
        std::_Exit(0);
    }
    ::close(pipeFd[1]);
    Run r;
    if (::read(pipeFd[0], &r.devices, sizeof r.devices) != sizeof r.devices) r.devices = 0;
    ::close(pipeFd[0]);
    int status = 0;
    rusage u{};
    ::wait4(pid, &status, 0, &u);
    r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.cpu = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
            static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    r.peakGb = static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) r.devices = 0;
    return r;
}

std::vector<int> parseList(const std::string& s) {
    std::vector<int> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> ranks = {64, 256, 1024};
    osc::synth::WorkloadSpec spec;
    spec.layers = 60;
    spec.steps = 8;
    spec.mode = osc::synth::OverlapMode::PerParam;
    spec.jitter = 0.05;
    std::string dir = "bench_multirank_jobs";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--ranks") ranks = parseList(next());
        else if (a == "--layers") spec.layers = std::stoi(next());
        else if (a == "--steps") spec.steps = std::stoi(next());
        else if (a == "--dir") dir = next();
        else {
            std::fprintf(stderr, "usage: bench_multirank [--ranks 64,256,1024] [--layers L] [--steps S] [--dir DIR]\n");
            return a == "--help" || a == "-h" ? 0 : 2;
        }
    }
    const long kernelsPerRank = static_cast<long>(spec.steps) * (3L * spec.layers);
    std::printf("bench_multirank: N ranks x %ld kernels (%d layers, %d steps, per-param), %u cores online\n",
                kernelsPerRank, spec.layers, spec.steps, std::thread::hardware_concurrency());
    double firstPeak = 0, lastPeak = 0;
    bool fasterWithTwo = true;
    for (int n : ranks) {
        spec.ranks = n;
        const std::string job = dir + "/ranks" + std::to_string(n) + "_l" + std::to_string(spec.layers) + "_s" +
                                std::to_string(spec.steps);
        if (!fs::exists(job)) {
            std::printf("  generating %s...\n", job.c_str());
            std::fflush(stdout);
            // In a child: the writers' memory must not count in the runs below.
            inChild([&] { return osc::synth::writeWorkload(spec, job, false).size(); });
        }
        const Run all = inChild([&] { return osc::analyze(osc::loadCapture(job)).devices.size(); });
        Run piped[2];
        for (int jobs : {1, 2}) {
            piped[jobs - 1] = inChild([&] {
                osc::PipelineOptions o;
                o.jobs = jobs;
                return osc::analyzeInputs({job}, {}, o).analysis.devices.size();
            });
        }
        std::printf("  %5d ranks: all in memory %6.2f s %5.2f GB | streamed, 1 worker %6.2f s (cpu %6.2f) %5.2f GB"
                    " | 2 workers %6.2f s %5.2f GB (%.2fx)\n",
                    n, all.wall, all.peakGb, piped[0].wall, piped[0].cpu, piped[0].peakGb, piped[1].wall,
                    piped[1].peakGb, piped[0].wall / piped[1].wall);
        if (all.devices != static_cast<size_t>(n) || piped[0].devices != static_cast<size_t>(n) ||
            piped[1].devices != static_cast<size_t>(n)) {
            std::printf("FAIL: a run did not analyse all %d devices\n", n);
            return 1;
        }
        if (firstPeak == 0) firstPeak = piped[1].peakGb;
        lastPeak = piped[1].peakGb;
        fasterWithTwo &= piped[1].wall < piped[0].wall;
    }
    const double growth = lastPeak / firstPeak;
    const bool flat = growth <= 1.5;
    std::printf("peak memory growth, smallest to largest N (2 workers): %.2fx (target <= 1.5x): %s\n", growth,
                flat ? "PASS" : "FAIL");
    std::printf("2 workers faster than 1 at every N: %s\n", fasterWithTwo ? "PASS" : "FAIL");
    return flat && fasterWithTwo ? 0 : 1;
}

// What always-on live metrics cost a training job: step time with the agent
// publishing metrics (file and /metrics) against the same job without any
// agent. The fake agent library plays the GPU (the paced training job of
// agent/fake/paced_training.h); the "application" is this program run as a
// child, loading the agent as the CUDA driver would and doing a fixed amount
// of CPU work per step, so every cycle the agent's threads take from it
// shows in its step time.
//
//   bench_live_overhead [--compare AGENT_LIB] [ROUNDS] [STEPS] [STEP_MS] [KERNELS]   (default 24 30 100 2000)
//   bench_live_overhead --help
//
// --compare then runs ROUNDS more pairs: the job under our agent and the
// same job under another build of the fake agent (an older commit's, say)
// at the same time, and prints both agents' CPU and their ratio: on a
// loaded machine the absolute figures grow with the load, and run one after
// the other two builds meet different loads; at once, the same.
//
// Each round runs the job without the agent and with it, back to back and
// in alternating order (ABBA...), STEPS steps each after a warm-up. The
// agent gets KERNELS compute kernels (and their launches, two all-reduces
// and their NCCL rows) per step: 2,000 kernels per 100 ms step is 40,000
// records a second, a busy real job's rate. Targets (issue 41): the agent's
// own CPU at most 0.5 % of the step, and the step time's 95 % interval not
// above 1 %.
//
// Two measurements, because a shared machine of two cores drifts by several
// per cent between runs of the same job:
//  - what the agent costs: the CPU its own threads used per step (osc-writer:
//    decoding and the per-step analysis; osc-metrics: publishing), from the
//    kernel's per-thread accounting, per STEP_MS of wall-clock time (the fake
//    GPU's step, which a loaded machine does not stretch as it stretches the
//    job thread's). It is all the agent can take from a job that keeps every core
//    busy, short of sharing caches with it;
//  - what the job saw: per round, the change of the median step time from
//    the run without the agent to the adjacent run with it (pairs cancel
//    slow drift), and a distribution-free 95 % interval of the median of
//    those changes (the sign test's order statistics). It catches what the
//    accounting cannot (cache and memory interference); where it is wide it
//    cannot confirm 1 %, but it still refutes it when its lower end is above.
// Also printed: the fake GPU's CPU (osc-fake-gpu: CUPTI's and the driver's
// part, not ours; it wakes once a millisecond, OVERLAPSCOPE_FAKE_WAKE_MS, so
// that on a machine of few cores it takes little from the job).
#include "bench/paired.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

volatile uint64_t g_sink = 0;

// A fixed amount of CPU work that the compiler cannot fold away.
void work(uint64_t iterations) {
    uint64_t x = g_sink | 1;
    for (uint64_t i = 0; i < iterations; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    g_sink = x;
}

double threadCpuMs() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// CPU seconds per thread name of this process, to the nanosecond
// (/proc/self/task/*/schedstat: time on a CPU; /proc/.../stat counts ticks).
std::map<std::string, double> threadCpu() {
    std::map<std::string, double> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
        std::string name;
        std::getline(std::ifstream(e.path() / "comm"), name);
        double ns = 0;
        std::ifstream(e.path() / "schedstat") >> ns;
        out[name] += ns / 1e9;
    }
    return out;
}

// The child: load the agent (if any), train, print the median step and the threads' CPU.
int app(int steps, uint64_t iterations, const char* report) {
    if (const char* path = std::getenv("CUDA_INJECTION64_PATH"); path && *path) {
        void* lib = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
        auto init = lib ? reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection")) : nullptr;
        if (!init || init() != 1) return 90;
    }
    for (int i = 0; i < 20; ++i) work(iterations);  // warm-up: the agent's first steps close too
    const auto cpu0 = threadCpu();
    const auto wall0 = Clock::now();
    std::vector<double> ms, cpuMs;
    for (int i = 0; i < steps; ++i) {
        const auto t0 = Clock::now();
        const double c0 = threadCpuMs();
        work(iterations);
        cpuMs.push_back(threadCpuMs() - c0);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    const auto cpu1 = threadCpu();
    const double wallS = std::chrono::duration<double>(Clock::now() - wall0).count();
    std::sort(ms.begin(), ms.end());
    std::sort(cpuMs.begin(), cpuMs.end());
    std::FILE* f = std::fopen(report, "w");
    if (!f) return 91;
    std::fprintf(f, "median_ms %.6f\nmedian_cpu_ms %.6f\nwall_s %.6f\n", ms[ms.size() / 2], cpuMs[cpuMs.size() / 2],
                 wallS);
    for (const auto& [name, s] : cpu1)
        std::fprintf(f, "cpu %s %.6f\n", name.c_str(), s - (cpu0.count(name) ? cpu0.at(name) : 0));
    std::fclose(f);
    return 0;
}

struct Result {
    double medianMs = 0, medianCpuMs = 0;
    double wallS = 0;  // of the measured steps
    std::map<std::string, double> cpu;
};

Result readReport(const std::string& path) {
    Result r;
    std::ifstream in(path);
    std::string key;
    while (in >> key) {
        if (key == "median_ms") {
            in >> r.medianMs;
        } else if (key == "median_cpu_ms") {
            in >> r.medianCpuMs;
        } else if (key == "wall_s") {
            in >> r.wallS;
        } else {
            std::string name;
            double s = 0;
            in >> name >> s;
            r.cpu[name] = s;
        }
    }
    return r;
}

int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

using osc::bench::loadAverage;
using osc::bench::median;
using osc::bench::medianInterval;

}  // namespace

constexpr const char* kUsage =
    "usage: bench_live_overhead [--compare AGENT_LIB] [ROUNDS] [STEPS] [STEP_MS] [KERNELS]   (default 24 30 100 "
    "2000)\n"
    "What always-on live metrics cost a CPU-bound job of STEP_MS steps with the fake agent playing KERNELS\n"
    "compute kernels a step (2000 a 100 ms step: 40,000 records/s), against the same job without an agent,\n"
    "in ROUNDS pairs of runs of STEPS steps. Prints the agent threads' CPU per step and the median change of\n"
    "step time with its 95 % interval; targets: CPU <= 0.5 % of the step, the interval not above 1 %.\n"
    "--compare AGENT_LIB: then ROUNDS more pairs, the job under our agent and under that build of\n"
    "liboverlapscope-agent-fake.so (an older commit's) at the same time: both agents' CPU and their ratio.\n"
    "Exit code 0 when both hold, 1 when not, 2 for bad arguments.\n";

// A whole number from lo to hi, or exit 2 naming the argument.
int argument(const char* text, const char* name, int lo, int hi) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < lo || v > hi) {
        std::fprintf(stderr, "bench_live_overhead: %s %s: expected a whole number from %d to %d (see --help)\n", name,
                     text, lo, hi);
        std::exit(2);
    }
    return static_cast<int>(v);
}

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "--app") == 0 && argc == 5)
        return app(std::atoi(argv[2]), std::strtoull(argv[3], nullptr, 10), argv[4]);
    if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    std::string compare;
    if (argc >= 2 && std::strcmp(argv[1], "--compare") == 0) {
        if (argc < 3 || !std::filesystem::is_regular_file(argv[2])) {
            std::fprintf(stderr, "bench_live_overhead: --compare %s: no such agent library (see --help)\n",
                         argc < 3 ? "" : argv[2]);
            return 2;
        }
        compare = std::filesystem::absolute(argv[2]).string();
        argv += 2;
        argc -= 2;
    }
    if (argc > 5) {
        std::fprintf(stderr, "bench_live_overhead: too many arguments (see --help)\n");
        return 2;
    }
    const int rounds = argc > 1 ? argument(argv[1], "ROUNDS", 1, 10000) : 24;
    const int steps = argc > 2 ? argument(argv[2], "STEPS", 1, 100000) : 30;
    const int stepMs = argc > 3 ? argument(argv[3], "STEP_MS", 1, 60000) : 100;
    const int kernels = argc > 4 ? argument(argv[4], "KERNELS", 1, 100000) : 2000;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    char tmpl[] = "/tmp/bench_live_XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);

    // Work per step: STEP_MS of this thread's CPU time (median of a few
    // tries; CPU time, so that other loads on the machine do not shorten it).
    std::vector<double> perIteration;
    for (int i = 0; i < 5; ++i) {
        const double c0 = threadCpuMs();
        work(20'000'000);
        perIteration.push_back((threadCpuMs() - c0) / 20e6);
    }
    const auto iterations = static_cast<uint64_t>(stepMs / median(perIteration));

    // library "": no agent.
    // The job with `library` as its agent ("": none), started in a child.
    const auto launch = [&](const std::string& library, int index) {
        std::vector<std::pair<std::string, std::string>> env = {{"CUDA_INJECTION64_PATH", ""}};
        if (!library.empty()) {
            env = {{"CUDA_INJECTION64_PATH", library},
                   {"OVERLAPSCOPE_DORMANT", "1"},
                   {"OVERLAPSCOPE_METRICS_FILE", dir + "/metrics" + std::to_string(index) + ".prom"},
                   {"OVERLAPSCOPE_METRICS_PORT", std::to_string(freePort())},
                   {"OVERLAPSCOPE_SOCKET_DIR", dir + "/sock"},
                   {"OVERLAPSCOPE_FAKE_STEP_MS", std::to_string(stepMs)},
                   {"OVERLAPSCOPE_FAKE_KERNELS", std::to_string(kernels)},
                   {"OVERLAPSCOPE_FAKE_NCCL_BYTES", "67108864"},
                   {"OVERLAPSCOPE_FAKE_WAKE_MS", "1"}};
        }
        const std::string report = dir + "/r" + std::to_string(index);
        const pid_t pid = ::fork();
        if (pid == 0) {
            for (const auto& [k, v] : env) v.empty() ? ::unsetenv(k.c_str()) : ::setenv(k.c_str(), v.c_str(), 1);
            std::vector<std::string> args = {self, "--app", std::to_string(steps), std::to_string(iterations), report};
            std::vector<char*> a;
            for (auto& arg : args) a.push_back(arg.data());
            a.push_back(nullptr);
            ::execv(self.c_str(), a.data());
            std::_Exit(3);
        }
        return pid;
    };
    const auto collect = [&](pid_t pid, int index, const std::string& library) {
        int st = 0;
        ::waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            std::fprintf(stderr, "bench_live_overhead: run %d (%s) failed: %s %d\n", index,
                         library.empty() ? "without an agent" : library.c_str(),
                         WIFSIGNALED(st) ? "signal" : "exit status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
            std::exit(1);
        }
        return readReport(dir + "/r" + std::to_string(index));
    };
    const auto run = [&](const std::string& library, int index) {
        return collect(launch(library, index), index, library);
    };

    const double loadBefore = loadAverage();
    std::vector<double> without, with, withoutCpu, withCpu;
    std::map<std::string, double> agentCpu, compareCpu;
    double agentWallS = 0, compareWallS = 0;
    int index = 0;
    for (int r = 0; r < rounds; ++r) {
        const bool agentFirst = r % 2 == 1;  // ABBA: drifts in the machine's load cancel
        for (int k = 0; k < 2; ++k) {
            const bool agent = (k == 0) == agentFirst;
            const Result res = run(agent ? OSC_FAKE_AGENT : "", index++);
            (agent ? with : without).push_back(res.medianMs);
            (agent ? withCpu : withoutCpu).push_back(res.medianCpuMs);
            if (!agent) continue;
            for (const auto& [name, s] : res.cpu) agentCpu[name] += s;
            agentWallS += res.wallS;
        }
    }
    // --compare: ours and theirs at the same time, so that both meet the
    // same load (on a busy machine it changes from one run to the next).
    double oursWallS = 0;
    std::map<std::string, double> oursCpu;
    for (int r = 0; compare.empty() ? false : r < rounds; ++r) {
        const int a = index++, b = index++;
        const pid_t ours = launch(OSC_FAKE_AGENT, a), theirs = launch(compare, b);
        const Result mine = collect(ours, a, OSC_FAKE_AGENT), other = collect(theirs, b, compare);
        for (const auto& [name, s] : mine.cpu) oursCpu[name] += s;
        for (const auto& [name, s] : other.cpu) compareCpu[name] += s;
        oursWallS += mine.wallS;
        compareWallS += other.wallS;
    }
    std::vector<double> change;  // per round, with against without, %
    for (size_t i = 0; i < without.size(); ++i) change.push_back((with[i] - without[i]) / without[i] * 100);
    const double overhead = median(change);
    const auto [lo, hi] = medianInterval(change);
    // The agent's CPU per STEP_MS of wall-clock time, the fake job's step:
    // the fake GPU is paced by the wall clock, whatever the job thread does,
    // so a loaded machine that stretches the job's steps does not inflate it.
    const auto perStep = [&](std::map<std::string, double>& cpu, const char* thread, double wallS) {
        return wallS > 0 ? cpu[thread] / wallS * stepMs : 0.0;
    };
    const double perStepMs = perStep(agentCpu, "osc-writer", agentWallS) + perStep(agentCpu, "osc-metrics", agentWallS);
    const double ca = median(withoutCpu), cb = median(withCpu);
    const double share = perStepMs / stepMs * 100;
    std::printf(
        "live metrics overhead: %d rounds x %d steps of %d ms CPU work, %d kernels/step (%d records/s), "
        "load %.1f -> %.1f, %ld cores\n",
        rounds, steps, stepMs, kernels, 2 * (kernels + 2) * 1000 / stepMs, loadBefore, loadAverage(),
        ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf(
        "  agent threads' CPU per step: %.3f ms = %.2f %% of the step (osc-writer %.3f, osc-metrics %.3f); "
        "fake GPU %.3f ms\n",
        perStepMs, share, perStep(agentCpu, "osc-writer", agentWallS), perStep(agentCpu, "osc-metrics", agentWallS),
        perStep(agentCpu, "osc-fake-gpu", agentWallS));
    if (!compare.empty()) {
        const double mine = perStep(oursCpu, "osc-writer", oursWallS) + perStep(oursCpu, "osc-metrics", oursWallS);
        const double theirs =
            perStep(compareCpu, "osc-writer", compareWallS) + perStep(compareCpu, "osc-metrics", compareWallS);
        std::printf(
            "  --compare, %d rounds of both jobs at once: ours %.3f ms per step, %s %.3f ms (osc-writer %.3f, "
            "osc-metrics %.3f); ours / theirs = %.2f\n",
            rounds, mine, compare.c_str(), theirs, perStep(compareCpu, "osc-writer", compareWallS),
            perStep(compareCpu, "osc-metrics", compareWallS), theirs > 0 ? mine / theirs : 0.0);
    }
    std::printf("  step time, median of the per-round changes: %+.2f %%, 95 %% interval [%+.2f, %+.2f] %%\n", overhead,
                lo, hi);
    // The job thread's own CPU time per step leaves out the time it waited
    // for a core: what remains is what sharing caches and memory with the
    // agent costs, which a busy machine cannot hide.
    std::printf("  job thread's CPU per step, median: %.3f ms without, %.3f ms with: %+.2f %%\n", ca, cb,
                (cb - ca) / ca * 100);
    std::printf("  per round (without / with, ms):");
    for (size_t i = 0; i < without.size(); ++i) std::printf(" %.2f/%.2f", without[i], with[i]);
    std::printf("\n");
    const bool cpuOk = share <= 0.5, wallOk = hi <= 1.0;
    std::printf("target: agent CPU <= 0.5 %% of the step: %s (%.2f %%)\n", cpuOk ? "PASS" : "FAIL", share);
    std::printf("target: step time's 95 %% interval not above 1 %%: %s ([%+.2f, %+.2f] %%%s)\n",
                wallOk ? "PASS" : "FAIL", lo, hi,
                wallOk || lo > 1.0 ? "" : "; too wide to confirm here: the machine is noisy, run on a quiet one");
    const bool pass = cpuOk && wallOk;
    std::filesystem::remove_all(dir);
    return pass ? 0 : 1;
}

// End-to-end `overlapscope report` on a big capture: 10 million kernels on 8
// streams, written once by `overlapscope synth --kernels` and cached in the
// build directory. Measures the report command as a user runs it (load +
// analyze + text report) in a child process: wall time, and its peak RSS from
// wait4()'s rusage (the child's own ru_maxrss, so the synth run that may have
// preceded it does not count). Target: < 15 s and < 2 GB on a 2-core machine.
//
// The machine may be shared: the CPU time (user + system) and the load
// average are printed too, so a slow wall time caused by other work shows.
//
//   bench_report [--kernels N] [--streams S] [--format text|json|markdown]
//                [--target-s S] [--target-gb G] [--regenerate]
//                [--cli PATH] [--dir DIR]   (defaults: the built overlapscope, the build dir)
#include "analyzer/capture/schema.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct ChildResult {
    int status = -1;
    double seconds = 0;
    long maxRssKb = 0;
    double cpuSeconds = 0;  // user + system: what the command costs on an idle machine
};

// Runs argv with stdout to /dev/null (stderr kept for error lines).
ChildResult runChild(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("fork");
        std::exit(2);
    }
    if (pid == 0) {
        const int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
        execv(argv[0], argv.data());
        std::perror(argv[0]);
        _exit(127);
    }
    ChildResult r;
    struct rusage usage {};
    wait4(pid, &r.status, 0, &usage);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.maxRssKb = usage.ru_maxrss;  // KiB on Linux
    r.cpuSeconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                   static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    return r;
}

bool succeeded(const ChildResult& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

}  // namespace

int main(int argc, char** argv) {
    unsigned long long kernels = 10'000'000;
    int streams = 8;
    std::string format = "text";
    double targetS = 15.0, targetGb = 2.0;
    bool regenerate = false;
    std::string cli = OSC_CLI_PATH, dir = OSC_BENCH_DIR;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_report: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--kernels")
            kernels = std::stoull(next());
        else if (a == "--streams")
            streams = std::stoi(next());
        else if (a == "--format")
            format = next();
        else if (a == "--target-s")
            targetS = std::stod(next());
        else if (a == "--target-gb")
            targetGb = std::stod(next());
        else if (a == "--regenerate")
            regenerate = true;
        else if (a == "--cli")
            cli = next();
        else if (a == "--dir")
            dir = next();
        else {
            std::fprintf(stderr,
                         "usage: bench_report [--kernels N] [--streams S] [--format F] "
                         "[--target-s S] [--target-gb G] [--regenerate] [--cli PATH] [--dir DIR]\n");
            return a == "--help" || a == "-h" ? 0 : 2;
        }
    }
    // The format version in the name: a cached file from an older format
    // would measure the old reader path.
    const std::string capture = dir + "/bench_report_" + std::to_string(kernels) + "_kernels_" +
                                std::to_string(streams) + "_streams_format" +
                                std::to_string(osc::schema::kFormatVersion) + ".sqlite";
    if (regenerate || !std::filesystem::exists(capture)) {
        std::printf("generating %s (%llu kernels on %d streams)...\n", capture.c_str(), kernels, streams);
        std::fflush(stdout);
        const auto g = runChild({cli, "synth", "--force", "--kernels", std::to_string(kernels), "--streams",
                                 std::to_string(streams), "-o", capture});
        if (!succeeded(g)) {
            std::fprintf(stderr, "bench_report: synth failed\n");
            return 2;
        }
        std::printf("  synth: %.2f s (%.2f M kernels/s), peak RSS %.0f MiB, file %.0f MiB\n", g.seconds,
                    static_cast<double>(kernels) / g.seconds / 1e6, g.maxRssKb / 1024.0,
                    static_cast<double>(std::filesystem::file_size(capture)) / (1 << 20));
    } else {
        std::printf("using cached %s\n", capture.c_str());
    }
    std::fflush(stdout);

    const auto r = runChild({cli, "report", "--format", format, capture});
    if (!succeeded(r)) {
        std::fprintf(stderr, "bench_report: overlapscope report failed\n");
        return 2;
    }
    const double gb = r.maxRssKb / (1024.0 * 1024.0);
    const bool timeOk = r.seconds < targetS, memOk = gb < targetGb;
    std::printf("overlapscope report --format %s on %llu kernels / %d streams (%ld cores online)\n", format.c_str(),
                kernels, streams, sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("  wall time : %.2f s   (target < %.1f s)  %s\n", r.seconds, targetS, timeOk ? "PASS" : "FAIL");
    std::printf("  peak RSS  : %.2f GB  (target < %.1f GB) %s\n", gb, targetGb, memOk ? "PASS" : "FAIL");
    std::printf("  throughput: %.2f M kernels/s\n", static_cast<double>(kernels) / r.seconds / 1e6);
    double load[1] = {0};
    getloadavg(load, 1);
    std::printf("  cpu time  : %.2f s user+system (load average %.1f while running)\n", r.cpuSeconds, load[0]);
    std::printf("%s\n", timeOk && memOk ? "PASS" : "FAIL");
    return timeOk && memOk ? 0 : 1;
}

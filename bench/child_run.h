// How the benchmarks measure a piece of work: in a child process, so that
// its peak RSS is its own and nothing it allocated lingers into the next
// run; medians of several runs (this machine is shared and noisy).
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace osc::bench {

struct ChildRun {
    double wall = 0, cpu = 0, peakMb = 0;  // seconds, seconds (user + system), MiB
    bool ok = true;                        // exited 0
    int status = 0;                        // as wait(2) reports it, to say how a run failed
};

namespace detail {
inline ChildRun waitFor(pid_t pid, std::chrono::steady_clock::time_point start) {
    int status = 0;
    rusage u{};
    ::wait4(pid, &status, 0, &u);
    ChildRun r;
    r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.cpu = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
            static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    r.peakMb = static_cast<double>(u.ru_maxrss) / 1024.0;
    r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    r.status = status;
    return r;
}
}  // namespace detail

// `work` in a forked child; it succeeded when it returned true.
inline ChildRun runInChild(const std::function<bool()>& work) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) std::_Exit(work() ? 0 : 3);
    return detail::waitFor(pid, start);
}

// A program (argv[0] a path), its output to /dev/null.
inline ChildRun runProgram(const std::vector<std::string>& args) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int devnull = ::open("/dev/null", O_WRONLY);
        ::dup2(devnull, 1);
        ::dup2(devnull, 2);
        std::vector<char*> argv;
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return detail::waitFor(pid, start);
}

// Each figure's median over `runs` runs; ok when every run was.
inline ChildRun medianOf(int runs, const std::function<ChildRun()>& run) {
    std::vector<ChildRun> all;
    for (int i = 0; i < std::max(1, runs); ++i) all.push_back(run());
    const auto middle = [&](double ChildRun::*field) {
        std::vector<double> v;
        for (const auto& r : all) v.push_back(r.*field);
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    ChildRun m;
    m.wall = middle(&ChildRun::wall);
    m.cpu = middle(&ChildRun::cpu);
    m.peakMb = middle(&ChildRun::peakMb);
    m.ok = std::all_of(all.begin(), all.end(), [](const ChildRun& r) { return r.ok; });
    return m;
}

}  // namespace osc::bench

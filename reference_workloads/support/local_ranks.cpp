#include "reference_workloads/support/local_ranks.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "reference_workloads/support/workload_error.h"

namespace oscwl {
namespace {

volatile sig_atomic_t g_forward[64];
volatile sig_atomic_t g_count = 0;

void forward_signal(int signo) {
    for (sig_atomic_t i = 0; i < g_count; ++i)
        if (g_forward[i] > 0) ::kill(static_cast<pid_t>(g_forward[i]), signo);
}

std::string describe(int status) {
    if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status));
    return "ended";
}

int code_of(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

}  // namespace

bool is_spawned_rank() {
    const char* v = std::getenv("OSC_SPAWNED_RANK");
    return v && *v == '1';
}

int run_local_ranks(int ranks, const std::vector<std::string>& argv, std::string& failure, double grace_s) {
    if (ranks < 1 || ranks > 64) throw UsageError("--ranks must be between 1 and 64");
    std::string tmpl = (std::filesystem::temp_directory_path() / "osc-ranks-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        throw WorkloadError(std::string("cannot create a rendezvous directory: ") + std::strerror(errno));
    const std::string rendezvous = "file:" + tmpl + "/nccl-id";

    std::vector<pid_t> pids;
    g_count = 0;
    struct sigaction fwd {
    }, old_int{}, old_term{};
    fwd.sa_handler = forward_signal;
    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &fwd, &old_int);
    ::sigaction(SIGTERM, &fwd, &old_term);
    // A stop signal must not reach a child before it has its own handlers
    // back: with ours it would be forwarded to nobody and lost, and the rank
    // would run on until the grace's SIGKILL. So both stay blocked from
    // before the fork until each side is ready; a pending one then lands.
    sigset_t stops, old_mask;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    for (int r = 0; r < ranks; ++r) {
        ::sigprocmask(SIG_BLOCK, &stops, &old_mask);
        const pid_t pid = ::fork();
        if (pid < 0) {
            const int error = errno;
            // The ranks already started would wait for this one forever: end them,
            // and leave the caller's signal handling as it was.
            for (pid_t p : pids) ::kill(p, SIGKILL);
            for (pid_t p : pids) ::waitpid(p, nullptr, 0);
            g_count = 0;
            ::sigaction(SIGINT, &old_int, nullptr);
            ::sigaction(SIGTERM, &old_term, nullptr);
            ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
            std::error_code ec;
            std::filesystem::remove_all(tmpl, ec);
            throw WorkloadError(std::string("fork: ") + std::strerror(error));
        }
        if (pid == 0) {
            ::sigaction(SIGINT, &old_int, nullptr);
            ::sigaction(SIGTERM, &old_term, nullptr);
            ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
            const std::string n = std::to_string(ranks), me = std::to_string(r);
            ::setenv("RANK", me.c_str(), 1);
            ::setenv("LOCAL_RANK", me.c_str(), 1);
            ::setenv("WORLD_SIZE", n.c_str(), 1);
            ::setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
            ::setenv("OSC_RENDEZVOUS", rendezvous.c_str(), 1);
            ::setenv("OSC_SPAWNED_RANK", "1", 1);
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            std::fprintf(stderr, "%s: %s\n", argv[0].c_str(), std::strerror(errno));
            ::_exit(127);
        }
        pids.push_back(pid);
        g_forward[g_count] = pid;
        g_count = g_count + 1;
        ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    }

    int result = 0;
    size_t running = pids.size();
    auto stop_deadline = std::chrono::steady_clock::time_point::max();
    bool killed = false;
    while (running > 0) {
        for (size_t i = 0; i < pids.size(); ++i) {
            int status = 0;
            if (pids[i] <= 0 || ::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
            pids[i] = -1;
            g_forward[i] = 0;
            --running;
            if (code_of(status) == 0 || result != 0) continue;
            result = code_of(status);
            failure = "rank " + std::to_string(i) + " " + describe(status);
            // Its peers would wait for it inside NCCL: stop them.
            for (pid_t p : pids)
                if (p > 0) ::kill(p, SIGTERM);
            stop_deadline =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(grace_s * 1000));
        }
        if (!killed && std::chrono::steady_clock::now() > stop_deadline) {
            for (pid_t p : pids)
                if (p > 0) ::kill(p, SIGKILL);
            killed = true;
        }
        if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    g_count = 0;
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    std::error_code ec;
    std::filesystem::remove_all(tmpl, ec);
    return result;
}

}  // namespace oscwl

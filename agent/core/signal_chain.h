// What the agent's signal handlers (signal_bridge, crash_report) share: the
// application's own handler, installed before ours, still runs, and runs as
// the kernel would have run it. Async-signal-safe.
#pragma once

#include <pthread.h>

#include <csignal>
#include <cstddef>

namespace osc::agent {

// Where `signo` is in a handler's list of signals; -1 when absent.
template <size_t N>
int signalIndex(const int (&signals)[N], int signo) {
    for (size_t i = 0; i < N; ++i)
        if (signals[i] == signo) return static_cast<int>(i);
    return -1;
}

// True when the disposition is a function (not the default, not ignore).
inline bool isSignalHandler(const struct sigaction& action) {
    if (action.sa_flags & SA_SIGINFO) return action.sa_sigaction != nullptr;
    return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

// Runs `previous` (a handler) with its own mask, and the signal itself unless
// SA_NODEFER, blocked, with the arguments the kernel gave us.
inline void runSignalHandler(const struct sigaction& previous, int signo, siginfo_t* info, void* context) {
    sigset_t mask = previous.sa_mask, saved;
    if (!(previous.sa_flags & SA_NODEFER)) sigaddset(&mask, signo);
    pthread_sigmask(SIG_BLOCK, &mask, &saved);
    if (previous.sa_flags & SA_SIGINFO)
        previous.sa_sigaction(signo, info, context);
    else
        previous.sa_handler(signo);
    pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

}  // namespace osc::agent

// Threads a library starts inside someone else's process (the agent's
// writer, control and timer threads, the WAL copier) must not receive the
// application's signals: SIGINT delivered to one of them would never reach
// the application. They are created with every signal blocked.
#pragma once

#include <pthread.h>
#include <csignal>
#include <thread>
#include <utility>

namespace osc {

template <typename Fn>
std::thread startBackgroundThread(Fn&& fn) {
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    std::thread t(std::forward<Fn>(fn));
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return t;
}

}  // namespace osc

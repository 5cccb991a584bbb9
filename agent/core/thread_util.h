// Agent threads must not receive the application's signals (SIGINT would
// otherwise be delivered to a writer thread and never reach the app).
#pragma once

#include <csignal>
#include <pthread.h>
#include <thread>
#include <utility>

namespace osc::agent {

template <typename Fn>
std::thread startBackgroundThread(Fn&& fn) {
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    std::thread t(std::forward<Fn>(fn));
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return t;
}

}  // namespace osc::agent

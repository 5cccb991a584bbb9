#include "agent/core/signal_bridge.h"

#include "agent/core/signal_chain.h"
#include "analyzer/capture/background_thread.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <cerrno>

namespace osc::agent {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr int kSignalCount = 2;

// Process-wide by nature: a signal handler cannot reach an object.
int g_pipe[2] = {-1, -1};
pid_t g_ownerPid = 0;
struct sigaction g_previous[kSignalCount];
bool g_installed[kSignalCount] = {false, false};
// A default-action signal is being handled by the watcher (close, then re-raise).
volatile sig_atomic_t g_closing[kSignalCount] = {0, 0};

// Runs the application's handler as the kernel would have.
void chain(int i, int signo, siginfo_t* info, void* context) {
    const struct sigaction previous = g_previous[i];
    if (previous.sa_flags & SA_RESETHAND) {  // one-shot: the next one takes the default action
        g_previous[i].sa_handler = SIG_DFL;
        g_previous[i].sa_flags &= ~(SA_SIGINFO | SA_RESETHAND);
    }
    runSignalHandler(previous, signo, info, context);
}

void notifyWatcher(int signo) {
    const unsigned char b = static_cast<unsigned char>(signo);
    [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &b, 1);
}

void onSignal(int signo, siginfo_t* info, void* context) {
    const int saved = errno;
    const int i = signalIndex(kSignals, signo);
    // A forked child has no watcher thread and no capture of ours.
    const bool watched = ::getpid() == g_ownerPid && g_pipe[1] >= 0;
    if (i >= 0 && isSignalHandler(g_previous[i])) {
        if (watched) notifyWatcher(signo);
        chain(i, signo, info, context);
    } else if (watched && i >= 0 && !g_closing[i]) {
        g_closing[i] = 1;
        notifyWatcher(signo);
    } else {
        // The default action, now: no watcher, or the user insists.
        if (i >= 0) ::sigaction(signo, &g_previous[i], nullptr);
        ::raise(signo);
    }
    errno = saved;
}

bool ourHandlerIsInstalled(int signo) {
    struct sigaction current {};
    ::sigaction(signo, nullptr, &current);
    return (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == onSignal;
}

}  // namespace

SignalBridge::SignalBridge(Callback onSignal) : onSignal_(std::move(onSignal)) {}

SignalBridge::~SignalBridge() { shutdown(); }

void SignalBridge::install() {
    std::lock_guard lock(mutex_);
    if (!running_) {
        if (g_pipe[0] < 0 && ::pipe2(g_pipe, O_CLOEXEC) != 0) return;
        // A handler must never block on a full pipe.
        ::fcntl(g_pipe[1], F_SETFL, ::fcntl(g_pipe[1], F_GETFL) | O_NONBLOCK);
        g_ownerPid = ::getpid();
        running_ = true;
        thread_ = startBackgroundThread([this] { watch(); });
    }
    for (int i = 0; i < kSignalCount; ++i) {
        if (g_installed[i]) continue;
        struct sigaction current {};
        ::sigaction(kSignals[i], nullptr, &current);
        if (current.sa_handler == SIG_IGN && !(current.sa_flags & SA_SIGINFO)) continue;
        // The application's handler keeps its mask, alternate stack and
        // restart behaviour when it runs through ours.
        struct sigaction ours {};
        ours.sa_sigaction = onSignal;
        ours.sa_mask = current.sa_mask;
        ours.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_ONSTACK | SA_NODEFER));
        if (!isSignalHandler(current) || (current.sa_flags & SA_RESTART)) ours.sa_flags |= SA_RESTART;
        g_closing[i] = 0;
        if (::sigaction(kSignals[i], &ours, &g_previous[i]) == 0) g_installed[i] = true;
    }
}

void SignalBridge::restore(int signo) {
    const int i = signalIndex(kSignals, signo);
    if (i < 0 || !g_installed[i]) return;
    // The application may have installed a handler after ours: leave it be.
    if (ourHandlerIsInstalled(signo)) ::sigaction(signo, &g_previous[i], nullptr);
    g_installed[i] = false;
}

void SignalBridge::watch() {
    for (;;) {
        unsigned char b = 0;
        const ssize_t n = ::read(g_pipe[0], &b, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || b == 0) return;  // 0 = shutdown request
        const int signo = b;
        const int i = signalIndex(kSignals, signo);
        if (onSignal_) onSignal_(signo);
        if (i < 0 || !g_closing[i]) continue;  // the application's handler has run already
        {
            std::lock_guard lock(mutex_);
            restore(signo);
        }
        // Process-directed, so it reaches one of the application's threads.
        ::kill(::getpid(), signo);
    }
}

void SignalBridge::shutdown() {
    std::thread watcher;
    {
        std::lock_guard lock(mutex_);
        for (int s : kSignals) restore(s);
        if (running_) {
            const unsigned char stop = 0;
            [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &stop, 1);
            watcher = std::move(thread_);
            running_ = false;
        }
    }
    // Joined outside the lock: the watcher takes it after handling a signal.
    if (watcher.joinable()) {
        if (watcher.get_id() == std::this_thread::get_id())
            watcher.detach();
        else
            watcher.join();
    }
}

}  // namespace osc::agent

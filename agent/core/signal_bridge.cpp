#include "agent/core/signal_bridge.h"

#include "analyzer/capture/background_thread.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace osc::agent {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr int kSignalCount = 2;

// Process-wide by nature: a signal handler cannot reach an object.
int g_pipe[2] = {-1, -1};
pid_t g_ownerPid = 0;
struct sigaction g_previous[kSignalCount];
bool g_installed[kSignalCount] = {false, false};

int indexOf(int signo) {
    for (int i = 0; i < kSignalCount; ++i)
        if (kSignals[i] == signo) return i;
    return -1;
}

void onSignal(int signo) {
    const int saved = errno;
    const int i = indexOf(signo);
    if (::getpid() != g_ownerPid || g_pipe[1] < 0) {
        // A forked child has no watcher thread: hand the signal straight back.
        if (i >= 0) ::sigaction(signo, &g_previous[i], nullptr);
        ::raise(signo);
    } else {
        const unsigned char b = static_cast<unsigned char>(signo);
        [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &b, 1);
    }
    errno = saved;
}

}  // namespace

SignalBridge::SignalBridge(Callback onSignal) : onSignal_(std::move(onSignal)) {}

SignalBridge::~SignalBridge() { shutdown(); }

void SignalBridge::install() {
    std::lock_guard lock(mutex_);
    if (!running_) {
        if (g_pipe[0] < 0 && ::pipe2(g_pipe, O_CLOEXEC) != 0) return;
        g_ownerPid = ::getpid();
        running_ = true;
        thread_ = startBackgroundThread([this] { watch(); });
    }
    for (int i = 0; i < kSignalCount; ++i) {
        if (g_installed[i]) continue;
        struct sigaction current{};
        ::sigaction(kSignals[i], nullptr, &current);
        if (current.sa_handler == SIG_IGN && !(current.sa_flags & SA_SIGINFO)) continue;
        struct sigaction ours{};
        ours.sa_handler = onSignal;
        sigemptyset(&ours.sa_mask);
        ours.sa_flags = SA_RESTART;
        if (::sigaction(kSignals[i], &ours, &g_previous[i]) == 0) g_installed[i] = true;
    }
}

void SignalBridge::restore(int signo) {
    const int i = indexOf(signo);
    if (i < 0 || !g_installed[i]) return;
    ::sigaction(signo, &g_previous[i], nullptr);
    g_installed[i] = false;
}

void SignalBridge::watch() {
    for (;;) {
        unsigned char b = 0;
        const ssize_t n = ::read(g_pipe[0], &b, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || b == 0) return;  // 0 = shutdown request
        const int signo = b;
        if (onSignal_) onSignal_(signo);
        {
            std::lock_guard lock(mutex_);
            restore(signo);
        }
        // Process-directed, so the app's handler runs on one of its own threads.
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
        if (watcher.get_id() == std::this_thread::get_id()) watcher.detach();
        else watcher.join();
    }
}

}  // namespace osc::agent

// SIGINT/SIGTERM during a capture. The agent's handler never makes the
// application wait for the capture file:
// - the application has a handler of its own: that handler runs at once, in
//   our handler, on the thread and with the siginfo_t and context the kernel
//   gave us, as if we were not there; meanwhile a watcher thread closes the
//   capture (end_reason "signal");
// - the signal's action is the default (terminate): the watcher closes the
//   capture first, within the capture's exit drain bound, then puts the
//   default back and raises the signal again. A second such signal while
//   that runs terminates at once.
// Our handler only writes the signal number to a pipe (async-signal-safe)
// and chains; everything else happens on the watcher thread.
#pragma once

#include <csignal>
#include <functional>
#include <mutex>
#include <thread>

namespace osc::agent {

class SignalBridge {
public:
    using Callback = std::function<void(int signo)>;
    explicit SignalBridge(Callback onSignal);
    ~SignalBridge();
    SignalBridge(const SignalBridge&) = delete;
    SignalBridge& operator=(const SignalBridge&) = delete;

    // Installs the handlers (idempotent; a signal the app ignores stays ignored).
    void install();
    // Stops the watcher thread and restores the previous dispositions where
    // ours is still in place.
    void shutdown();

private:
    void watch();
    void restore(int signo);

    Callback onSignal_;
    std::mutex mutex_;
    std::thread thread_;
    bool running_ = false;
};

}  // namespace osc::agent

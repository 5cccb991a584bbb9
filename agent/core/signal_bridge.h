// SIGINT/SIGTERM during a capture: the handler only writes the signal number
// to a pipe (async-signal-safe); a watcher thread closes the capture, then
// puts back the application's previous disposition and raises the signal
// again, so the app's own handler (or the default action) runs as if we had
// never been there.
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
    // Stops the watcher thread and restores the previous dispositions.
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

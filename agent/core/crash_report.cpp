#include "agent/core/crash_report.h"

#include "agent/core/signal_chain.h"

#include <execinfo.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace osc::agent {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
constexpr int kCrashSignalCount = sizeof(kCrashSignals) / sizeof(kCrashSignals[0]);
// Signal handlers reach no object: the dispositions we replaced live here,
// written once before our handler can run.
struct sigaction g_previousCrashHandlers[kCrashSignalCount];
std::atomic<bool> g_reporting{false};

// Only write(2) and fixed buffers below: nothing else is safe in a handler.
void say(const char* s) {
    for (size_t n = std::strlen(s); n > 0;) {
        const ssize_t w = ::write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= static_cast<size_t>(w);
    }
}

void sayNumber(uint64_t v, bool hex) {
    char buf[24];
    int i = sizeof buf - 1;
    buf[i] = '\0';
    const unsigned base = hex ? 16 : 10;
    do {
        buf[--i] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v != 0 && i > 2);
    if (hex) {
        buf[--i] = 'x';
        buf[--i] = '0';
    }
    say(buf + i);
}

const char* nameOf(int signo) {
    switch (signo) {
        case SIGSEGV:
            return "SIGSEGV";
        case SIGBUS:
            return "SIGBUS";
        case SIGILL:
            return "SIGILL";
        case SIGFPE:
            return "SIGFPE";
    }
    return "signal";
}

void onFault(int signo, siginfo_t* info, void* context) {
    const int i = signalIndex(kCrashSignals, signo);
    if (!g_reporting.exchange(true)) {
        char thread[17] = {};
        ::prctl(PR_GET_NAME, thread, 0, 0, 0);
        say("overlapscope-agent: fatal ");
        say(nameOf(signo));
        say(" at address ");
        sayNumber(reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr), true);
        say(" in thread ");
        sayNumber(static_cast<uint64_t>(::syscall(SYS_gettid)), false);
        say(" (");
        say(thread);
        say(") of process ");
        sayNumber(static_cast<uint64_t>(::getpid()), false);
        say("; its stack (frames in liboverlapscope-agent are ours):\n");
        void* frames[64];
        const int n = ::backtrace(frames, 64);
        ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
    }
    // The fault takes its course as if we were not there.
    if (i >= 0) {
        const struct sigaction previous = g_previousCrashHandlers[i];
        ::sigaction(signo, &previous, nullptr);
        if (isSignalHandler(previous)) runSignalHandler(previous, signo, info, context);
    }
    // Returning re-runs the faulting instruction under the restored
    // disposition (the default: terminate, dump core); a signal raised by
    // kill() is raised again.
    if (info && info->si_code <= 0) ::raise(signo);
}

}  // namespace

void installCrashReport() {
    static std::once_flag once;
    std::call_once(once, [] {
        // backtrace() loads libgcc on its first call, which allocates: done
        // here, never first inside the handler.
        void* warm[2];
        (void)::backtrace(warm, 2);
        for (int i = 0; i < kCrashSignalCount; ++i) {
            struct sigaction current {};
            if (::sigaction(kCrashSignals[i], nullptr, &current) != 0) continue;
            if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
            struct sigaction ours {};
            ours.sa_sigaction = onFault;
            ours.sa_flags = SA_SIGINFO | SA_ONSTACK;  // a stack overflow needs the app's alternate stack
            sigemptyset(&ours.sa_mask);
            g_previousCrashHandlers[i] = current;
            ::sigaction(kCrashSignals[i], &ours, nullptr);
        }
    });
}

}  // namespace osc::agent

// The crash report (agent/core/crash_report.h): a child process installs it,
// then faults; the parent reads the child's stderr and how it died. Known
// answers: the signal, the address written to (null), a stack naming this
// test program, and the same death as without the report.
#include "agent/core/crash_report.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

namespace {

struct Death {
    std::string stderrText;
    int status = 0;
};

// Runs `body` in a child whose stderr comes back; the child must not return.
template <typename Body>
Death inChild(Body body) {
    int pipeFds[2];
    if (::pipe(pipeFds) != 0) return {};
    const pid_t child = ::fork();
    if (child == 0) {
        ::dup2(pipeFds[1], STDERR_FILENO);
        ::close(pipeFds[0]);
        body();
        ::_exit(99);  // the fault did not happen
    }
    ::close(pipeFds[1]);
    Death d;
    char buf[4096];
    for (ssize_t n; (n = ::read(pipeFds[0], buf, sizeof buf)) > 0;) d.stderrText.append(buf, static_cast<size_t>(n));
    ::close(pipeFds[0]);
    ::waitpid(child, &d.status, 0);
    return d;
}

// Read at run time, so the compiler cannot see the write is through null.
int* volatile g_null = nullptr;

[[gnu::noinline]] void writeThroughNull() { *static_cast<volatile int*>(g_null) = 1; }

TEST(CrashReport, AFaultIsNamedWithItsStackAndStillKillsTheProcess) {
    const Death d = inChild([] {
        struct rlimit none {};  // no core file from the test
        ::setrlimit(RLIMIT_CORE, &none);
        osc::agent::installCrashReport();
        writeThroughNull();
    });
    ASSERT_TRUE(WIFSIGNALED(d.status)) << d.stderrText;
    EXPECT_EQ(WTERMSIG(d.status), SIGSEGV);
    EXPECT_NE(d.stderrText.find("overlapscope-agent: fatal SIGSEGV at address 0x0 in thread "), std::string::npos)
        << d.stderrText;
    EXPECT_NE(d.stderrText.find("test_agent_crash_report"), std::string::npos) << d.stderrText;  // a frame of ours
}

TEST(CrashReport, TheApplicationsOwnHandlerStillRunsAfterIt) {
    const Death d = inChild([] {
        struct sigaction app {};
        app.sa_handler = [](int) {
            const char msg[] = "app handler ran\n";
            (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
            ::_exit(42);
        };
        ::sigaction(SIGSEGV, &app, nullptr);
        osc::agent::installCrashReport();
        writeThroughNull();
    });
    ASSERT_TRUE(WIFEXITED(d.status)) << d.stderrText;
    EXPECT_EQ(WEXITSTATUS(d.status), 42);
    const size_t ours = d.stderrText.find("overlapscope-agent: fatal SIGSEGV");
    const size_t theirs = d.stderrText.find("app handler ran");
    ASSERT_NE(ours, std::string::npos) << d.stderrText;
    ASSERT_NE(theirs, std::string::npos) << d.stderrText;
    EXPECT_LT(ours, theirs);
}

TEST(CrashReport, AnIgnoredSignalStaysIgnored) {
    const Death d = inChild([] {
        ::signal(SIGFPE, SIG_IGN);
        osc::agent::installCrashReport();
        ::raise(SIGFPE);  // ignored: nothing happens, nothing is said
        ::_exit(7);
    });
    ASSERT_TRUE(WIFEXITED(d.status));
    EXPECT_EQ(WEXITSTATUS(d.status), 7);
    EXPECT_EQ(d.stderrText, "");
}

}  // namespace

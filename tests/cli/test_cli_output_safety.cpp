// Issue 29 items 1-4 and 8, end to end: no output goes through a link
// another user planted, a FIFO nobody reads is refused, a signal leaves no
// temporary behind, and long legal names work.
#include "cli_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

namespace {

constexpr uid_t kOtherUser = 12345;  // nobody on the test machine: "another user"

// Another user's link, as only root can make one (lchown).
void plantForeignLink(const std::string& target, const std::string& link) {
    fs::create_symlink(target, link);
    ASSERT_EQ(::lchown(link.c_str(), kOtherUser, kOtherUser), 0) << link;
}

// A shared directory like /tmp: world-writable and sticky.
std::string stickyDirectory(const std::string& dir) {
    fs::create_directory(dir);
    ::chmod(dir.c_str(), 01777);
    return dir;
}

// root's secret: 0600, what the planted link points at.
std::string victim(const std::string& path) {
    { std::ofstream(path) << "root's secret"; }
    ::chmod(path.c_str(), 0600);
    return path;
}

// Every command that writes a file the user named, writing `out`.
std::vector<std::string> forcedWriters(const std::string& capture, const std::string& partial, const std::string& out) {
    return {"check --min-overlap-ratio 0.5 --junit " + quote(out) + " " + quote(capture),
            "report --force -o " + quote(out) + " " + quote(capture),
            "report --partial --force -o " + quote(out) + " " + quote(capture),
            "merge --force -o " + quote(out) + " " + quote(partial),
            "export --force -o " + quote(out) + " " + quote(capture),
            "diff --force -o " + quote(out) + " " + quote(capture) + " " + quote(capture),
            "whatif --force -o " + quote(out) + " " + quote(capture)};
}

void expectRefusedAndUntouched(const CliResult& r, const std::string& args, const std::string& victimPath,
                               const std::string& why) {
    EXPECT_EQ(r.code, 2) << args << ": " << r.out << r.err;
    EXPECT_EQ(lineCount(r.err), 1u) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("overlapscope: ", 0), 0u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(slurp(victimPath), "root's secret") << args;
    struct stat st {};
    ASSERT_EQ(::stat(victimPath.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << args;
}

class CliOutputSafety : public Cli {
protected:
    void SetUp() override {
        if (::geteuid() != 0) GTEST_SKIP() << "planting another user's link takes root (lchown)";
        capture_ = bucketed(1);
        partial_ = path("one.partial.json");
        ASSERT_EQ(run("report --partial -o " + quote(partial_) + " " + quote(capture_)).code, 0);
    }
    std::string capture_, partial_;
};

}  // namespace

// Item 1: the JUnit artifact of `check`, always replaced, never through the link.
TEST_F(CliOutputSafety, JunitThroughAnotherUsersLinkInAStickyDirectoryIsRefused) {
    const auto secret = victim(path("secret"));
    const auto link = stickyDirectory(path("shared")) + "/overlap.xml";
    plantForeignLink(secret, link);
    const std::string args = "check --min-overlap-ratio 0.5 --junit " + quote(link) + " " + quote(capture_);
    expectRefusedAndUntouched(run(args), args, secret, "symbolic link owned by another user (uid 12345)");
    EXPECT_TRUE(fs::is_symlink(link));
}

// Item 2: every writer, with --force, in a sticky directory and in one another user owns.
TEST_F(CliOutputSafety, NoWriterFollowsAPlantedLinkEvenWithForce) {
    const auto secret = victim(path("secret"));
    const auto sticky = stickyDirectory(path("shared"));
    const auto theirs = path("theirs");
    fs::create_directory(theirs);
    ASSERT_EQ(::chown(theirs.c_str(), kOtherUser, kOtherUser), 0);
    for (const auto& [link, why] :
         std::vector<std::pair<std::string, std::string>>{{sticky + "/out", "symbolic link owned by another user"},
                                                          {theirs + "/out", "symbolic link owned by another user"}}) {
        plantForeignLink(secret, link);
        for (const auto& args : forcedWriters(capture_, partial_, link))
            expectRefusedAndUntouched(run(args), args, secret, why);
        fs::remove(link);
    }
    // Our own link in a directory another user owns: they could swap it at any time.
    fs::create_symlink(secret, theirs + "/mine");
    for (const auto& args : forcedWriters(capture_, partial_, theirs + "/mine"))
        expectRefusedAndUntouched(run(args), args, secret, "in a directory owned by another user (uid 12345)");
}

// Item 2: a planted link to a directory on the way is not followed either.
TEST_F(CliOutputSafety, APlantedDirectoryLinkOnTheWayIsRefused) {
    const auto target = path("roots");
    fs::create_directory(target);
    const auto link = stickyDirectory(path("shared")) + "/reports";
    plantForeignLink(target, link);
    for (const auto& args : forcedWriters(capture_, partial_, link + "/out")) {
        const auto r = run(args);
        EXPECT_EQ(r.code, 2) << args << ": " << r.err;
        EXPECT_NE(r.err.find("/reports is a symbolic link owned by another user"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(target + "/out")) << args;
    }
}

// Item 2 for captures: without --force a planted link is refused; with it the
// name is replaced (the link removed), never the file it points to.
TEST_F(CliOutputSafety, SynthReplacesAPlantedLinksNameNotItsTarget) {
    const auto secret = victim(path("secret"));
    const auto link = stickyDirectory(path("shared")) + "/cap.sqlite";
    plantForeignLink(secret, link);
    auto r = run("synth --steps 1 -o " + quote(link));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("cap.sqlite: "), std::string::npos) << r.err;
    EXPECT_EQ(slurp(secret), "root's secret");
    r = run("synth --steps 1 --force -o " + quote(link));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(slurp(secret), "root's secret");
    EXPECT_FALSE(fs::is_symlink(link));
    EXPECT_EQ(run("report " + quote(link)).code, 0);

    const auto dirLink = path("shared/caps");
    plantForeignLink(path("."), dirLink);
    r = run("synth --steps 1 -o " + quote(dirLink + "/x.sqlite"));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("caps is a symbolic link owned by another user"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("x.sqlite")));
}

// Item 3: a FIFO with no reader is refused at once, not waited on.
TEST_F(Cli, OutputToAFifoNobodyReadsIsRefusedWithoutBlocking) {
    const auto f = bucketed(1);
    const auto fifo = path("nobody-reads.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const std::string& args :
         std::vector<std::string>{"report -o " + quote(fifo) + " " + quote(f),
                                  "check --min-overlap-ratio 0.5 --junit " + quote(fifo) + " " + quote(f),
                                  "export -o " + quote(fifo) + " " + quote(f)}) {
        const auto r = run(args, 10);
        EXPECT_EQ(r.code, 2) << args << ": " << r.err;
        EXPECT_EQ(lineCount(r.err), 1u) << r.err;
        EXPECT_NE(r.err.find("nothing reads"), std::string::npos) << r.err;
    }
}

// Item 4: a signal while the output is written removes the temporary file,
// and the process still ends by that signal.
TEST_F(Cli, ASignalWhileWritingLeavesNoTemporaryFile) {
    const auto big = path("big.sqlite");
    ASSERT_EQ(run("synth --kernels 500000 -o " + quote(big)).code, 0);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
        const auto out = path("report.json");
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            const int devNull = ::open("/dev/null", O_RDWR);
            ::dup2(devNull, 1);
            ::dup2(devNull, 2);
            ::execl(OSC_CLI_PATH, OSC_CLI_PATH, "report", "--format", "json", "-o", out.c_str(), big.c_str(),
                    static_cast<char*>(nullptr));
            ::_exit(127);
        }
        // The temporary is there from the start of the write, which here
        // spans loading and analysing half a million kernels.
        const auto temporaries = [&] {
            size_t n = 0;
            for (const auto& e : fs::directory_iterator(dir_))
                n += e.path().filename().string().rfind(".report.json.tmp-", 0) == 0;
            return n;
        };
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (temporaries() == 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ASSERT_EQ(temporaries(), 1u) << "no temporary appeared";
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ::kill(child, signal);
        int status = 0;
        ::waitpid(child, &status, 0);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal) << "status " << status;
        EXPECT_EQ(temporaries(), 0u) << "signal " << signal;
        EXPECT_FALSE(fs::exists(out));
    }
}

// Item 8: names up to the file system's limit (255 bytes) work; the
// temporary name is shortened instead.
TEST_F(Cli, OutputNamesUpToTheNameLimitWork) {
    const auto f = bucketed(1);
    for (const size_t length : {243u, 244u, 250u, 255u}) {
        const std::string name = std::string(length - 5, 'r') + ".json";
        const auto out = path(name);
        const auto r = run("report --format json -o " + quote(out) + " " + quote(f));
        EXPECT_EQ(r.code, 0) << length << ": " << r.err;
        EXPECT_TRUE(fs::exists(out)) << length;
        fs::remove(out);
        // Multi-byte characters are cut whole in the temporary name.
        const std::string wide = std::string(length - 5 - 3, 'r') + "\xc3\xa9\xc3\xa9"  // two é
                                 + std::string(1, 'r') + ".json";
        if (wide.size() > 255) continue;
        EXPECT_EQ(run("report -o " + quote(path(wide)) + " " + quote(f)).code, 0) << length;
    }
    const auto r = run("report -o " + quote(path(std::string(256, 'r'))) + " " + quote(f));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
}

// Issue 14 items 1-2, end to end: every command that writes a file the user
// named (report -o, report --partial -o, check --junit, export -o, diff -o;
// merge -o shares report's writer) writes through special
// files and symlinks instead of replacing them, and never follows a planted
// temporary name.
#include "cli_fixture.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

bool isFifo(const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// The commands that take an output file, each writing `out`.
std::vector<std::string> fileWriters(const std::string& capture, const std::string& out, const std::string& force) {
    return {"report " + force + " -o " + quote(out) + " " + quote(capture),
            "report --partial " + force + " -o " + quote(out) + " " + quote(capture),
            "check --min-overlap-ratio 0.5 --junit " + quote(out) + " " + quote(capture),
            "export " + force + " -o " + quote(out) + " " + quote(capture),
            "diff " + force + " -o " + quote(out) + " " + quote(capture) + " " + quote(capture)};
}

}  // namespace

TEST_F(Cli, OutputToAFifoWritesThroughAndKeepsTheFifo) {
    const auto f = bucketed(1);
    const auto fifo = path("out.fifo");
    for (const auto& args : fileWriters(f, fifo, "--force")) {
        fs::remove(fifo);
        ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
        // Opened non-blocking before the command runs, so neither side waits
        // for the other; drained until the command has finished and closed it.
        const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
        ASSERT_GE(fd, 0);
        std::string received;
        std::atomic<bool> commandDone{false};
        std::thread reader([&] {
            char buf[65536];
            for (;;) {
                const ssize_t n = ::read(fd, buf, sizeof buf);
                if (n > 0)
                    received.append(buf, static_cast<size_t>(n));
                else if (n == 0 && commandDone)
                    break;
                else
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
        const auto r = run(args);
        const bool fifoKept = isFifo(fifo);
        commandDone = true;
        reader.join();
        ::close(fd);
        EXPECT_EQ(r.code, 0) << args << ": " << r.err;
        EXPECT_TRUE(fifoKept) << args << ": the FIFO was replaced";
        EXPECT_FALSE(received.empty()) << args;
    }
}

TEST_F(Cli, OutputThroughASymlinkReplacesTheTargetAndKeepsTheLink) {
    const auto f = bucketed(1);
    const auto target = path("real.txt"), link = path("link.txt");
    for (const auto& args : fileWriters(f, link, "--force")) {
        fs::remove(link);
        { std::ofstream(target) << "old"; }
        fs::create_symlink(target, link);
        const auto r = run(args);
        EXPECT_EQ(r.code, 0) << args << ": " << r.err;
        EXPECT_TRUE(fs::is_symlink(link)) << args << ": the link was replaced";
        EXPECT_NE(slurp(target), "old") << args << ": the target was not written";
        EXPECT_FALSE(slurp(target).empty()) << args;
    }
}

TEST_F(Cli, OutputThroughASymlinkToACharacterDeviceWritesThrough) {
    // A link to /dev/null stands in for /dev/null itself: if the device were
    // replaced, only our link would be, so the test cannot harm the machine.
    const auto f = bucketed(1);
    const auto link = path("null");
    fs::create_symlink("/dev/null", link);
    for (const auto& args : fileWriters(f, link, "--force")) {
        const auto r = run(args);
        EXPECT_EQ(r.code, 0) << args << ": " << r.err;
        EXPECT_TRUE(fs::is_symlink(link)) << args << ": the link to /dev/null was replaced";
    }
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(Cli, OutputWithoutForceStillRefusesAnExistingFile) {
    const auto f = bucketed(1);
    const auto out = path("kept.txt");
    { std::ofstream(out) << "keep"; }
    for (const auto& args : fileWriters(f, out, "")) {
        if (args.rfind("check", 0) == 0) continue;  // the JUnit file is an artifact: always replaced
        const auto r = run(args);
        EXPECT_EQ(r.code, 2) << args;
        EXPECT_NE(r.err.find("--force"), std::string::npos) << args << ": " << r.err;
        EXPECT_EQ(slurp(out), "keep") << args;
    }
}

TEST_F(Cli, OutputFileGetsTheUsualModeAndNoTemporaryIsLeft) {
    const auto f = bucketed(1);
    const auto out = path("new.txt");
    for (const auto& args : fileWriters(f, out, "--force")) {
        fs::remove(out);
        const auto r = run(args);
        EXPECT_EQ(r.code, 0) << args << ": " << r.err;
        struct stat st {};
        ASSERT_EQ(::stat(out.c_str(), &st), 0) << args;
        const mode_t mask = ::umask(0);
        ::umask(mask);
        EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << args;
        // Only the capture, the output and the fixture's own files remain.
        for (const auto& e : fs::directory_iterator(dir_))
            EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << args << ": " << e.path();
    }
}

// Issue 29 items 2 and 11 for the agent: its capture names pass over names
// someone planted in a shared output directory, its partial results never go
// through another user's link, and what refuses a link says so.
#include "agent/core/partial_writer.h"
#include "agent/core/process_identity.h"
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/capture_writer.h"
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace osc::agent {
namespace {

constexpr uid_t kOtherUser = 12345;

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(AgentOutputFiles, CaptureNamesPassOverPlantedLinksAndSideFiles) {
    test::TempDir dir;
    ProcessIdentity who;
    who.host = "node1";
    who.pid = 321;
    // A dangling link at the name itself, then a link at the next name's -shm:
    // both names are taken, as a file there would be.
    std::filesystem::create_symlink(dir / "nowhere", dir / "node1-321.sqlite");
    std::filesystem::create_symlink(dir / "nowhere", dir / "node1-321-2.sqlite-shm");
    std::ofstream(dir / "node1-321-3.sqlite-wal") << "stale";
    EXPECT_EQ(captureFileName(dir.path(), who, 1), dir / "node1-321-4.sqlite");
}

TEST(AgentOutputFiles, APartialIsNeverWrittenThroughAnotherUsersLink) {
    if (::geteuid() != 0) GTEST_SKIP() << "planting another user's link takes root (lchown)";
    test::TempDir dir;
    const std::string shared = dir / "shared";
    std::filesystem::create_directory(shared);
    ::chmod(shared.c_str(), 01777);
    const std::string capture = shared + "/node1-321.sqlite";
    CaptureWriter::create(capture, 0)->close();
    const std::string victim = dir / "victim";
    std::ofstream(victim) << "root's secret";
    const std::string partial = PartialWriter::partialPathFor(capture);
    std::filesystem::create_symlink(victim, partial);
    ASSERT_EQ(::lchown(partial.c_str(), kOtherUser, kOtherUser), 0);
    try {
        PartialWriter::writePartialFor(capture, {});
        FAIL() << "wrote through the link";
    } catch (const CaptureError& e) {
        EXPECT_EQ(e.path(), partial);
        EXPECT_NE(e.problem().find("symbolic link owned by another user (uid 12345)"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(victim), "root's secret");
    EXPECT_TRUE(std::filesystem::is_symlink(partial));
}

// A capture started by a user who is not root, in a shared sticky directory
// where another user planted a link at its -shm name: the link can be
// neither followed nor removed, and the message says so and names it.
TEST(AgentOutputFiles, ALinkInTheWayOfACaptureIsNamed) {
    if (::geteuid() != 0) GTEST_SKIP() << "planting another user's link and dropping to nobody take root";
    test::TempDir dir;
    const std::string shared = dir / "shared";
    std::filesystem::create_directory(shared);
    ::chmod(dir.path().c_str(), 0755);
    ::chmod(shared.c_str(), 01777);
    const std::string capture = shared + "/node1-321.sqlite";
    const std::string link = capture + "-shm";
    std::filesystem::create_symlink(dir / "victim", link);
    ASSERT_EQ(::lchown(link.c_str(), kOtherUser, kOtherUser), 0);

    int pipeFds[2];
    ASSERT_EQ(::pipe(pipeFds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(pipeFds[0]);
        std::string message = "created";
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) message = "setuid failed";
        try {
            if (message == "created") CaptureWriter::create(capture, 0)->close();
        } catch (const CaptureError& e) {
            message = e.what();
        }
        (void)!::write(pipeFds[1], message.data(), message.size());
        ::_exit(0);
    }
    ::close(pipeFds[1]);
    std::string message;
    char buffer[512];
    for (ssize_t n; (n = ::read(pipeFds[0], buffer, sizeof buffer)) > 0;)
        message.append(buffer, static_cast<size_t>(n));
    ::close(pipeFds[0]);
    ::waitpid(child, nullptr, 0);
    EXPECT_NE(message.find(link + ": cannot remove a symbolic link owned by another user (uid 12345)"),
              std::string::npos)
        << message;
    EXPECT_FALSE(std::filesystem::exists(capture)) << "the capture that could not start was left behind";
}

}  // namespace
}  // namespace osc::agent

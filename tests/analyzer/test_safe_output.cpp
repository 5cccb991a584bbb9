// Issue 14 item 2: the temporary file an output is written to cannot be
// predicted or hijacked: names planted beforehand (as symlinks to a file the
// victim can write) are never followed, and the temporary is private (0600)
// until it is renamed into place.
#include "analyzer/output/safe_output.h"

#include "analyzer/capture/capture_error.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using osc::output::writeFileSafely;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The planted names go in a private directory of the test's own, so the test
// never follows or overwrites anything another user put in /tmp.
class SafeOutput : public ::testing::Test {
protected:
    const osc::testsupport::TempDir scratch_;
    const fs::path dir_{scratch_.path()};
};

}  // namespace

TEST_F(SafeOutput, PlantedTemporaryNamesAreNotFollowed) {
    const fs::path victim = dir_ / "victim.txt", out = dir_ / "report.txt";
    { std::ofstream(victim) << "precious"; }
    // Every name a predictable scheme could pick for this process, and a few
    // pids around it, point at the victim.
    const std::string pid = std::to_string(::getpid());
    for (const std::string& suffix : std::vector<std::string>{".tmp-" + pid, ".partial-" + pid, ".tmp", ".partial"})
        fs::create_symlink(victim, out.string() + suffix);
    writeFileSafely(
        out.string(), [](std::ostream& o) { o << "report"; }, false);
    EXPECT_EQ(slurp(victim), "precious");
    EXPECT_EQ(slurp(out), "report");
    EXPECT_FALSE(fs::is_symlink(out));
}

TEST_F(SafeOutput, TemporaryIsPrivateUntilRenamed) {
    const fs::path out = dir_ / "report.txt";
    std::set<fs::path> before;
    for (const auto& e : fs::directory_iterator(dir_)) before.insert(e.path());
    int seen = 0;
    writeFileSafely(
        out.string(),
        [&](std::ostream& o) {
            o << "partial" << std::flush;
            for (const auto& e : fs::directory_iterator(dir_)) {
                if (before.count(e.path())) continue;
                ++seen;
                struct stat st {};
                ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
                EXPECT_TRUE(S_ISREG(st.st_mode)) << e.path();
                EXPECT_EQ(st.st_mode & 0777, 0600u) << e.path();
                EXPECT_NE(e.path(), out) << "written in place, not under a temporary name";
            }
        },
        false);
    EXPECT_EQ(seen, 1);
    EXPECT_EQ(slurp(out), "partial");
}

TEST_F(SafeOutput, AFailedWriteLeavesTheOldFileAndNoTemporary) {
    const fs::path out = dir_ / "report.txt";
    { std::ofstream(out) << "old"; }
    EXPECT_THROW(writeFileSafely(
                     out.string(),
                     [](std::ostream& o) {
                         o << "half";
                         throw std::runtime_error("interrupted");
                     },
                     true),
                 std::runtime_error);
    EXPECT_EQ(slurp(out), "old");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SafeOutput, RefusesDirectoriesAndDanglingLinks) {
    EXPECT_THROW(writeFileSafely(
                     dir_.string(), [](std::ostream&) {}, true),
                 osc::CaptureError);
    fs::create_symlink(dir_ / "nowhere", dir_ / "dangling");
    EXPECT_THROW(writeFileSafely((dir_ / "dangling").string(), [](std::ostream&) {}, true), osc::CaptureError);
    EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
}

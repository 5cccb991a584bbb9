// The agent's writer hands WAL copying to a helper thread. Two things could
// silently go wrong: the WAL could grow without bound under a writer that is
// never idle (it only starts over when a transaction begins with every frame
// copied), and committed rows could fail to reach the database file. Both are
// checked against sizes and counts that follow from what was written.
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/capture/sqlite_util.h"
#include "analyzer/capture/wal_checkpointer.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

namespace osc {
namespace {

using testsupport::TempDir;

uint64_t sizeOr0(const std::string& path) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(path, ec);
    return ec ? 0 : n;
}

void addKernels(CaptureWriter& w, int64_t first, int count) {
    KernelRow k;
    k.globalPid = schema::packGlobalPid(5);
    k.demangledName = k.shortName = "k";
    for (int i = 0; i < count; ++i) {
        k.start = (first + i) * 10;
        k.end = k.start + 5;
        k.correlationId = static_cast<uint32_t>(first + i);
        w.addKernel(k);
    }
}

size_t kernelRows(const std::string& path) {
    Capture c;
    readSqliteCapture(path, {}, c);
    size_t n = 0;
    for (const auto& p : c.processes)
        for (const auto& d : p.devices) n += d.kernels.size();
    return n;
}

TEST(CaptureIoCheckpoint, WalStartsOverUnderAWriterThatIsNeverIdle) {
    TempDir dir;
    const auto path = dir / "busy.sqlite";
    constexpr int64_t kLimit = 1 << 20;
    constexpr int kCommits = 40, kRowsPerCommit = 25000;  // ~0.6 MB per commit, ~25 MB in all
    auto w =
        CaptureWriter::create(path, 0, CaptureWriterOptions{.backgroundCheckpoint = true, .walLimitBytes = kLimit});
    uint64_t largestWal = 0;
    for (int c = 0; c < kCommits; ++c) {
        addKernels(*w, int64_t{c} * kRowsPerCommit, kRowsPerCommit);
        w->commit();
        largestWal = std::max(largestWal, sizeOr0(path + "-wal"));
    }
    // Without starting over, the WAL would hold every page written (~25 MB).
    // Starting over at the limit bounds it by the limit plus one commit.
    EXPECT_LT(largestWal, uint64_t{4} << 20);
    EXPECT_GT(sizeOr0(path), uint64_t{15} << 20) << "committed pages reach the database file";
    w->close();
    EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << "a closed capture is one file";
    EXPECT_EQ(kernelRows(path), size_t{kCommits} * kRowsPerCommit);
}

TEST(CaptureIoCheckpoint, HelperCopiesCommittedPagesWhileTheCaptureRuns) {
    TempDir dir;
    const auto path = dir / "live.sqlite";
    // A limit the test never reaches: only the helper thread copies.
    auto w = CaptureWriter::create(path, 0, CaptureWriterOptions{.backgroundCheckpoint = true});
    const uint64_t emptySize = sizeOr0(path);
    addKernels(*w, 0, 50000);
    w->commit();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sizeOr0(path) < emptySize + (uint64_t{2} << 20) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_GE(sizeOr0(path), emptySize + (uint64_t{2} << 20)) << "the helper copied nothing";
    // A viewer following the live file sees exactly what was committed.
    addKernels(*w, 50000, 777);  // not committed yet
    EXPECT_EQ(kernelRows(path), 50000u);
    w->commit();
    EXPECT_EQ(kernelRows(path), 50777u);
    w->close();
    EXPECT_EQ(kernelRows(path), 50777u);
}

}  // namespace
}  // namespace osc

namespace osc::sql {
namespace {

// A viewer following the live capture holds a read snapshot, which pins the
// WAL: the writer may not wait a quarter second at every commit for a copy
// that cannot finish, only once each time the WAL grows by another limit.
TEST(WalCheckpointer, APinnedWalCostsOneWaitPerLimitNotPerCommit) {
    testsupport::TempDir dir;
    const auto path = dir / "pinned.sqlite";
    Database writer(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    writer.exec("PRAGMA page_size=4096");
    writer.exec("PRAGMA journal_mode=WAL");
    writer.exec("CREATE TABLE t (x BLOB)");
    constexpr int kLimitFrames = 16;
    WalCheckpointer checkpointer(writer.get(), path, int64_t{kLimitFrames} * 4096);
    Statement insert(writer, "INSERT INTO t VALUES (zeroblob(9000))");  // 3 pages a commit
    auto commitOne = [&] {
        writer.exec("BEGIN");
        insert.run();
        writer.exec("COMMIT");
        checkpointer.afterCommit();
    };
    commitOne();
    Database viewer(path, SQLITE_OPEN_READONLY);
    viewer.exec("BEGIN");
    Statement count(viewer, "SELECT count(*) FROM t");
    ASSERT_TRUE(count.step());          // the snapshot stays until the viewer's COMMIT
    constexpr int kPinnedCommits = 40;  // several limits' worth of frames
    for (int i = 0; i < kPinnedCommits; ++i) commitOne();
    // Every frame is still in the WAL (nothing could start over): its size
    // says how many limits the WAL grew by, hence how many waits are due.
    const auto frames = std::filesystem::file_size(path + "-wal") / (4096 + 24);
    EXPECT_GE(frames, uint64_t{3} * kLimitFrames);
    EXPECT_GE(checkpointer.writerWaits(), 1u);
    EXPECT_LE(checkpointer.writerWaits(), frames / kLimitFrames + 1) << "a wait per commit past the limit";
    count.reset();
    viewer.exec("COMMIT");

    // Unpinned, the WAL starts over again and stops growing.
    for (int i = 0; i < 10; ++i) commitOne();
    const auto settled = std::filesystem::file_size(path + "-wal");
    for (int i = 0; i < 40; ++i) commitOne();
    EXPECT_EQ(std::filesystem::file_size(path + "-wal"), settled);
}

}  // namespace
}  // namespace osc::sql

// The writer's batched inserts rebind only what changed between rows, and its
// string cache keys on text: both are fast paths that could silently write a
// stale value. Every expected value below follows from the row's index.
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/parallel_scan.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_reader.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace osc {
namespace {

const std::vector<std::string> kShortNames = {"alpha", "beta", "gamma_kernel_name_that_is_long_enough_to_hash"};
constexpr long kRows = 5000;  // several full batches and a partial one

uint32_t gridFor(long i) { return static_cast<uint32_t>(i % 1024 < 512 ? 1 : i); }
uint64_t graphNodeFor(long i) { return static_cast<uint64_t>(i % 11 == 0 ? i : 0); }
uint32_t syncStreamFor(long i) { return i % 2 ? kNoId : 3u; }
uint32_t eventFor(long i) { return i % 3 ? 9u : kNoId; }

class CaptureBatches : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = dir_ / "c.sqlite";
        auto w = CaptureWriter::create(path_, 1000);
        w->addProcess({schema::packGlobalPid(7), 7, "p"});
        char buf[64];
        for (long i = 0; i < kRows; ++i) {
            KernelRow r;
            r.globalPid = schema::packGlobalPid(7);
            r.deviceId = static_cast<uint32_t>(i % 3 == 0);
            r.start = i * 10;
            r.end = i * 10 + 5;
            r.streamId = static_cast<uint32_t>(i % 5);
            r.correlationId = static_cast<uint32_t>(i);
            // One buffer whose content changes: the cache must not return a stale id.
            std::snprintf(buf, sizeof buf, "k%ld", i % 7);
            r.demangledName = buf;
            r.shortName = kShortNames[static_cast<size_t>(i) % 3];
            r.gridX = gridFor(i);
            r.graphNodeId = graphNodeFor(i);
            w->addKernel(r);
            SyncRow y;  // columns that toggle between NULL and a value
            y.globalPid = r.globalPid;
            y.start = i;
            y.end = i + 1;
            y.streamId = syncStreamFor(i);
            y.eventId = eventFor(i);
            w->addSync(y);
            if (i % 1500 == 0) w->commit();
        }
        w->close();
    }
    void TearDown() override { sqlread::parallelScanMinRows = 1 << 20; }

    Capture read(bool launchDetails, bool split) {
        sqlread::parallelScanMinRows = split ? 1000 : (int64_t{1} << 40);
        Capture c;
        LoadOptions o;
        o.launchDetails = launchDetails;
        readSqliteCapture(path_, o, c);
        c.finalize();
        return c;
    }

    void expectEveryRow(const Capture& c, bool details) {
        EXPECT_EQ(c.kernelCount(), static_cast<size_t>(kRows));
        long kernels = 0, syncs = 0;
        for (const auto& p : c.processes)
            for (const auto& d : p.devices) {
                const auto& k = d.kernels;
                EXPECT_EQ(k.gridX.size(), details ? k.size() : 0u);
                for (size_t j = 0; j < k.size(); ++j, ++kernels) {
                    const long i = k.correlation[j];
                    ASSERT_EQ(k.start[j], i * 10);
                    ASSERT_EQ(k.end[j], i * 10 + 5);
                    ASSERT_EQ(d.id, static_cast<uint32_t>(i % 3 == 0));
                    ASSERT_EQ(k.stream[j], static_cast<uint32_t>(i % 5));
                    ASSERT_EQ(c.strings.at(k.name[j]), "k" + std::to_string(i % 7));
                    ASSERT_EQ(c.strings.at(k.shortName[j]), kShortNames[static_cast<size_t>(i) % 3]);
                    if (details) {
                        ASSERT_EQ(k.gridX[j], gridFor(i));
                        ASSERT_EQ(k.graphNodeId[j], graphNodeFor(i));
                    }
                }
                const auto& y = d.syncs;
                for (size_t j = 0; j < y.size(); ++j, ++syncs) {
                    const long i = y.start[j];
                    ASSERT_EQ(y.stream[j], syncStreamFor(i));
                    ASSERT_EQ(y.eventId[j], eventFor(i));
                }
            }
        EXPECT_EQ(kernels, kRows);
        EXPECT_EQ(syncs, kRows);
    }

    const testsupport::TempDir dir_;
    std::string path_;
};

TEST_F(CaptureBatches, EveryRowReadsBackOnOneThread) { expectEveryRow(read(true, false), true); }

TEST_F(CaptureBatches, EveryRowReadsBackOnTwoThreads) { expectEveryRow(read(true, true), true); }

TEST_F(CaptureBatches, WithoutLaunchDetailsTheOtherColumnsStillReadBack) {
    expectEveryRow(read(false, false), false);
    expectEveryRow(read(false, true), false);
}

TEST_F(CaptureBatches, ACaptureReadWithoutLaunchDetailsCanBeWrittenAgain) {
    const Capture c = read(false, false);
    const std::string out = dir_ / "out.sqlite";
    writeProcess(c, c.processes[0], out);
    Capture back;
    readSqliteCapture(out, {}, back);
    EXPECT_EQ(back.kernelCount(), static_cast<size_t>(kRows));
}

}  // namespace
}  // namespace osc

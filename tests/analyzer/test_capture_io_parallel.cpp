// The two-thread scan of big tables: same rows, same order, same placement
// as one thread, and cancellable. The threshold is lowered so a small file
// takes the two-thread path.
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/parallel_scan.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_reader.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

namespace osc {
namespace {

using testing_io::byPid;
using testsupport::TempDir;

struct ScanThreshold {
    explicit ScanThreshold(int64_t rows) : saved(sqlread::parallelScanMinRows) { sqlread::parallelScanMinRows = rows; }
    ~ScanThreshold() { sqlread::parallelScanMinRows = saved; }
    int64_t saved;
};

constexpr int kScanRows = 6000;
// Row i: process 600 when i % 3 == 2, else 500; device i % 2; start 10 i.
int64_t pidOfRow(int i) { return i % 3 == 2 ? 600 : 500; }

void writeInterleaved(const std::string& path) {
    auto w = CaptureWriter::create(path, 0);
    KernelRow k;
    for (int i = 0; i < kScanRows; ++i) {
        k.globalPid = schema::packGlobalPid(pidOfRow(i));
        k.deviceId = static_cast<uint32_t>(i % 2);
        k.start = i * 10;
        k.end = i * 10 + 7;
        k.correlationId = static_cast<uint32_t>(i);
        k.gridX = static_cast<uint32_t>(i);
        k.demangledName = i % 5 ? "compute" : "ncclDevKernel_AllReduce";
        w->addKernel(k);
    }
    w->close();
}

TEST(CaptureIoParallelScan, TwoThreadsGiveTheRowsOfOneInOrder) {
    TempDir dir;
    const auto path = dir / "interleaved.sqlite";
    writeInterleaved(path);
    Capture c;
    {
        ScanThreshold lowered(1000);
        readSqliteCapture(path, {}, c);
    }
    ASSERT_EQ(c.processes.size(), 2u);
    for (int64_t pid : {500, 600}) {
        const auto& p = byPid(c, pid);
        ASSERT_EQ(p.devices.size(), 2u);
        for (uint32_t device : {0u, 1u}) {
            // Expected straight from the generator's rule, in rowid order.
            std::vector<uint32_t> corr;
            std::vector<TimeNs> start;
            std::vector<std::string> names;
            for (int i = 0; i < kScanRows; ++i)
                if (pidOfRow(i) == pid && i % 2 == static_cast<int>(device)) {
                    corr.push_back(static_cast<uint32_t>(i));
                    start.push_back(i * 10);
                    names.push_back(i % 5 ? "compute" : "ncclDevKernel_AllReduce");
                }
            const auto& k = p.findDevice(device)->kernels;
            SCOPED_TRACE("pid " + std::to_string(pid) + " device " + std::to_string(device));
            EXPECT_EQ(k.correlation, corr);
            EXPECT_EQ(k.gridX, corr);
            EXPECT_EQ(k.start, start);
            ASSERT_EQ(k.name.size(), names.size());
            for (size_t i = 0; i < names.size(); ++i) ASSERT_EQ(c.strings.at(k.name[i]), names[i]);
        }
    }
}

TEST(CaptureIoParallelScan, CancelStopsBothThreads) {
    TempDir dir;
    const auto path = dir / "interleaved.sqlite";
    writeInterleaved(path);
    ScanThreshold lowered(1000);
    std::atomic<bool> cancel{false};
    LoadOptions options;
    options.cancel = &cancel;
    options.progress = [&](double, std::string_view stage) {
        if (stage == "kernels") cancel = true;
    };
    Capture c;
    EXPECT_THROW(readSqliteCapture(path, options, c), LoadCancelled);
    EXPECT_TRUE(c.processes.empty());
}

// A viewer following a live capture: every kernel it reads must come with
// its launch (names, grid) even while the writer keeps committing new
// launches and names. Each kernel here has a launch and a name of its own,
// so a kernel read from a newer snapshot than its launch shows as an empty
// name.
TEST(CaptureIoParallelScan, ALiveCaptureReadsAsOneSnapshot) {
    TempDir dir;
    const auto path = dir / "live.sqlite";
    auto w = CaptureWriter::create(path, 0);
    std::atomic<bool> done{false};
    std::thread writer([&] {
        KernelRow k;
        k.globalPid = schema::packGlobalPid(500);
        for (int i = 0; i < 60000; ++i) {
            const std::string name = "kernel_" + std::to_string(i);
            k.start = i * 10;
            k.end = k.start + 5;
            k.correlationId = static_cast<uint32_t>(i);
            k.gridX = static_cast<uint32_t>(i);
            k.demangledName = name;
            k.shortName = name;
            w->addKernel(k);
            if (i % 200 == 199) w->commit();
        }
        w->commit();
        done = true;
    });
    ScanThreshold lowered(1000);
    int reads = 0;
    while (!done || reads < 3) {
        Capture c;
        readSqliteCapture(path, {}, c);
        ++reads;
        if (c.processes.empty()) continue;
        const auto& k = c.processes[0].devices.at(0).kernels;
        for (size_t i = 0; i < k.size(); ++i) {
            ASSERT_EQ(k.gridX[i], k.correlation[i]) << "read " << reads << ", row " << i;
            ASSERT_EQ(c.strings.at(k.name[i]), "kernel_" + std::to_string(k.correlation[i]))
                << "read " << reads << ", row " << i;
        }
    }
    writer.join();
    w->close();
}

}  // namespace
}  // namespace osc

// Format 2's kernel layout: narrow OVERLAPSCOPE_KERNEL rows that share
// OVERLAPSCOPE_KERNEL_LAUNCH rows, with CUPTI_ACTIVITY_KIND_KERNEL a view.
// The truth is the rows the test wrote; both the view (what an nsys script
// sees) and our reader must give every field of every one back.
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_reader.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace osc {
namespace {

using testing_io::execSql;
using testing_io::forEachRow;
using testing_io::querySql;
using testsupport::TempDir;

const char* const kNames[] = {"gemm_kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "elementwise_kernel"};

// Row i: a base configuration, with launch field (i % 17) - 1 changed when
// i % 17 != 0, so every launch field is on its own the difference between
// two launch rows. Times and correlation ids differ in every row.
KernelRow row(int i) {
    KernelRow k;
    k.start = 1000 + int64_t{i} * 100;
    k.end = k.start + 60 + i % 7;
    k.deviceId = static_cast<uint32_t>(i % 2);
    k.correlationId = static_cast<uint32_t>(5000 + i);
    k.contextId = 1;
    k.streamId = 7;
    k.globalPid = schema::packGlobalPid(4242);
    k.demangledName = kNames[0];
    k.shortName = "gemm";
    k.gridX = 108, k.gridY = 2, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 64, k.staticSharedMemory = 16384, k.dynamicSharedMemory = 0;
    k.graphId = 0, k.graphNodeId = 0;
    switch (i % 17) {
        case 1:
            k.contextId = 2;
            break;
        case 2:
            k.streamId = 13;
            break;
        case 3:
            k.globalPid = schema::packGlobalPid(4343);
            break;
        case 4:
            k.demangledName = kNames[1];
            break;
        case 5:
            k.shortName = "nccl";
            break;
        case 6:
            k.gridX = 1;
            break;
        case 7:
            k.gridY = 3;
            break;
        case 8:
            k.gridZ = 4;
            break;
        case 9:
            k.blockX = 128;
            break;
        case 10:
            k.blockY = 2;
            break;
        case 11:
            k.blockZ = 2;
            break;
        case 12:
            k.registersPerThread = 32;
            break;
        case 13:
            k.staticSharedMemory = 0;
            break;
        case 14:
            k.dynamicSharedMemory = 49152;
            break;
        case 15:
            k.graphId = 9;
            break;
        case 16:
            k.graphNodeId = (uint64_t{1} << 40) + 3;
            break;
        default:
            break;
    }
    return k;
}

// The view's 20 columns for one row, as the test expects them.
std::array<int64_t, 20> expectedViewRow(const KernelRow& k, const std::map<std::string, int64_t>& ids) {
    return {k.start,
            k.end,
            k.deviceId,
            k.contextId,
            k.streamId,
            k.correlationId,
            static_cast<int64_t>(k.globalPid),
            ids.at(std::string(k.demangledName)),
            ids.at(std::string(k.shortName)),
            k.gridX,
            k.gridY,
            k.gridZ,
            k.blockX,
            k.blockY,
            k.blockZ,
            k.registersPerThread,
            k.staticSharedMemory,
            k.dynamicSharedMemory,
            k.graphId,
            static_cast<int64_t>(k.graphNodeId)};
}

std::map<std::string, int64_t> stringIds(const std::string& path) {
    std::map<std::string, int64_t> ids;
    EXPECT_TRUE(forEachRow(path, "SELECT id, value FROM StringIds", [&](sqlite3_stmt* st) {
        ids[reinterpret_cast<const char*>(sqlite3_column_text(st, 1))] = sqlite3_column_int64(st, 0);
    }));
    return ids;
}

// Every view row, keyed by correlation id.
std::map<int64_t, std::array<int64_t, 20>> viewRows(const std::string& path) {
    std::map<int64_t, std::array<int64_t, 20>> rows;
    EXPECT_TRUE(forEachRow(path, "SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL", [&](sqlite3_stmt* st) {
        std::array<int64_t, 20> r{};
        for (int c = 0; c < 20; ++c) r[static_cast<size_t>(c)] = sqlite3_column_int64(st, c);
        rows[r[5]] = r;
    }));
    return rows;
}

void writeRows(const std::string& path, const std::vector<KernelRow>& rows) {
    auto w = CaptureWriter::create(path, 0);
    for (const auto& k : rows) w->addKernel(k);
    w->close();
}

TEST(CaptureIoKernelLayout, EachDistinctLaunchIsStoredOnceAndTheViewGivesEveryFieldBack) {
    TempDir dir;
    const auto path = dir / "launches.sqlite";
    std::vector<KernelRow> rows;
    for (int i = 0; i < 17 * 20; ++i) rows.push_back(row(i));
    writeRows(path, rows);

    EXPECT_EQ(querySql(path, "SELECT count(*) FROM OVERLAPSCOPE_KERNEL"), "340");
    // 17 configurations (the base and one per changed field), each once.
    EXPECT_EQ(querySql(path, "SELECT count(*) FROM OVERLAPSCOPE_KERNEL_LAUNCH"), "17");

    const auto ids = stringIds(path);
    const auto view = viewRows(path);
    ASSERT_EQ(view.size(), rows.size());
    for (const auto& k : rows) {
        auto it = view.find(k.correlationId);
        ASSERT_NE(it, view.end()) << k.correlationId;
        EXPECT_EQ(it->second, expectedViewRow(k, ids)) << "correlation id " << k.correlationId;
    }
}

TEST(CaptureIoKernelLayout, ReaderGivesEveryFieldBackWithAndWithoutLaunchDetails) {
    TempDir dir;
    const auto path = dir / "launches.sqlite";
    std::vector<KernelRow> rows;
    for (int i = 0; i < 17 * 4; ++i) rows.push_back(row(i));
    writeRows(path, rows);

    for (bool details : {true, false}) {
        SCOPED_TRACE(details ? "launch details" : "core columns");
        LoadOptions options;
        options.launchDetails = details;
        Capture c;
        readSqliteCapture(path, options, c);
        size_t found = 0;
        for (const auto& k : rows) {
            const Process* p = nullptr;
            for (const auto& q : c.processes)
                if (q.pid == schema::pidOf(k.globalPid)) p = &q;
            ASSERT_NE(p, nullptr);
            const Device* d = nullptr;
            for (const auto& e : p->devices)
                if (e.id == k.deviceId) d = &e;
            ASSERT_NE(d, nullptr);
            const auto& t = d->kernels;
            size_t i = 0;
            while (i < t.size() && t.correlation[i] != k.correlationId) ++i;
            ASSERT_LT(i, t.size()) << k.correlationId;
            ++found;
            EXPECT_EQ(t.start[i], k.start);
            EXPECT_EQ(t.end[i], k.end);
            EXPECT_EQ(t.stream[i], k.streamId);
            EXPECT_EQ(c.strings.at(t.name[i]), k.demangledName);
            EXPECT_EQ(c.strings.at(t.shortName[i]), k.shortName);
            if (!details) continue;
            EXPECT_EQ(t.gridX[i], k.gridX);
            EXPECT_EQ(t.gridY[i], k.gridY);
            EXPECT_EQ(t.gridZ[i], k.gridZ);
            EXPECT_EQ(t.blockX[i], k.blockX);
            EXPECT_EQ(t.blockY[i], k.blockY);
            EXPECT_EQ(t.blockZ[i], k.blockZ);
            EXPECT_EQ(t.registersPerThread[i], k.registersPerThread);
            EXPECT_EQ(t.staticSharedMemory[i], k.staticSharedMemory);
            EXPECT_EQ(t.dynamicSharedMemory[i], k.dynamicSharedMemory);
            EXPECT_EQ(t.graphId[i], k.graphId);
            EXPECT_EQ(t.graphNodeId[i], k.graphNodeId);
        }
        EXPECT_EQ(found, rows.size());
    }
}

// The writer remembers a bounded number of configurations; past the bound a
// configuration seen before gets a new launch row, and nothing is misread.
TEST(CaptureIoKernelLayout, ForgottenLaunchesAreStoredAgainNotConfused) {
    TempDir dir;
    const auto path = dir / "many.sqlite";
    std::vector<KernelRow> rows;
    constexpr int kDistinct = 70000;  // more than the writer remembers (65536)
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < kDistinct; i += pass ? 997 : 1) {
            KernelRow k = row(0);
            k.gridX = static_cast<uint32_t>(1 + i);
            k.start = static_cast<int64_t>(rows.size()) * 10;
            k.end = k.start + 5;
            k.correlationId = static_cast<uint32_t>(rows.size());
            rows.push_back(k);
        }
    writeRows(path, rows);
    const auto ids = stringIds(path);
    const auto view = viewRows(path);
    ASSERT_EQ(view.size(), rows.size());
    for (const auto& k : rows) EXPECT_EQ(view.at(k.correlationId), expectedViewRow(k, ids));
}

// A damaged file whose kernel row names a launch the file lacks: the reader
// keeps the kernel (times, device, correlation) with empty launch fields.
TEST(CaptureIoKernelLayout, AKernelWithAMissingLaunchReadsWithEmptyLaunchFields) {
    TempDir dir;
    const auto path = dir / "dangling.sqlite";
    writeRows(path, {row(0), row(17)});
    execSql(path, "UPDATE OVERLAPSCOPE_KERNEL SET launchId = 12345 WHERE correlationId = 5017");
    Capture c;
    readSqliteCapture(path, {}, c);
    size_t total = 0, dangling = 0;
    for (const auto& p : c.processes)
        for (const auto& d : p.devices)
            for (size_t i = 0; i < d.kernels.size(); ++i) {
                ++total;
                if (d.kernels.correlation[i] != 5017) continue;
                ++dangling;
                EXPECT_EQ(d.kernels.start[i], row(17).start);
                EXPECT_EQ(c.strings.at(d.kernels.name[i]), "");
                EXPECT_EQ(d.kernels.gridX[i], 0u);
            }
    EXPECT_EQ(total, 2u);
    EXPECT_EQ(dangling, 1u);
}

// Format 1 files (one wide kernel table) are still read.
TEST(CaptureIoKernelLayout, FormatOneWideTableStillReads) {
    TempDir dir;
    const auto path = dir / "v1.sqlite";
    writeRows(path, {});
    execSql(path,
            "DROP VIEW CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE OVERLAPSCOPE_KERNEL; "
            "DROP TABLE OVERLAPSCOPE_KERNEL_LAUNCH; "
            "UPDATE OVERLAPSCOPE_META SET value = '1' WHERE name = 'format_version'; "
            "INSERT INTO StringIds VALUES (900, 'old_kernel'); "
            "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
            "contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, "
            "demangledName INTEGER, shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, "
            "blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER, "
            "staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, graphId INTEGER, "
            "graphNodeId INTEGER); "
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 250, 1, 1, 7, 77, " +
                std::to_string(schema::packGlobalPid(555)) + ", 900, 900, 12, 1, 1, 64, 1, 1, 40, 0, 0, 0, 0);");
    Capture c;
    readSqliteCapture(path, {}, c);
    ASSERT_EQ(c.processes.size(), 1u);
    EXPECT_EQ(c.processes[0].pid, 555);
    ASSERT_EQ(c.processes[0].devices.size(), 1u);
    const auto& d = c.processes[0].devices[0];
    EXPECT_EQ(d.id, 1u);
    ASSERT_EQ(d.kernels.size(), 1u);
    EXPECT_EQ(d.kernels.end[0], 250);
    EXPECT_EQ(d.kernels.stream[0], 7u);
    EXPECT_EQ(d.kernels.gridX[0], 12u);
    EXPECT_EQ(c.strings.at(d.kernels.name[0]), "old_kernel");
}

}  // namespace
}  // namespace osc

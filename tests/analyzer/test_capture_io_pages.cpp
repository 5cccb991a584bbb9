// Tables read straight from their pages (TablePages) give SQLite's rows, and
// say no, for SQLite to read, wherever the file holds anything else. The
// reference is always SQLite itself, reading the same file.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/parallel_scan.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/capture/table_pages.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace osc {
namespace {

using testing_io::execSql;
using testing_io::forEachRow;
using testsupport::TempDir;
using Rows = std::vector<std::vector<int64_t>>;

struct PagesRead {
    bool opened = false, ok = false;
    Rows rows;
};

PagesRead readFromPages(const std::string& path, const std::string& table,
                        const std::vector<sqlread::PageColumn>& columns) {
    Capture capture;
    LoadOptions options;
    sqlread::ReadContext ctx(path, options, capture);
    PagesRead out;
    auto pages = sqlread::TablePages::open(ctx, table, columns);
    if (!pages) return out;
    out.opened = true;
    const auto seen = pages->scan(
        0, pages->leafCount(),
        [&](const sqlread::DecodedRows& r) {
            for (size_t i = 0; i < r.count; ++i) {
                std::vector<int64_t> row;
                for (size_t c = 0; c < columns.size(); ++c) row.push_back(r.column(static_cast<int>(c))[i]);
                out.rows.push_back(row);
            }
        },
        [](uint64_t) {});
    out.ok = seen.ok;
    return out;
}

// `columns`: SQL expressions, one per value.
Rows readWithSqlite(const std::string& path, const std::string& table, const std::vector<std::string>& columns) {
    std::string select;
    for (const auto& c : columns) select += (select.empty() ? "" : ", ") + c;
    Rows rows;
    EXPECT_TRUE(forEachRow(path, "SELECT " + select + " FROM " + table + " ORDER BY rowid", [&](sqlite3_stmt* st) {
        std::vector<int64_t> row;
        for (int c = 0; c < static_cast<int>(columns.size()); ++c) row.push_back(sqlite3_column_int64(st, c));
        rows.push_back(row);
    }));
    return rows;
}

TEST(CaptureIoPages, RowsOfADeepTreeAreSqlites) {
    TempDir dir;
    const auto path = dir / "deep.sqlite";
    // 512-byte pages: 30,000 rows make a tree three or four pages deep.
    std::string sql = "PRAGMA page_size=512; CREATE TABLE T (a INTEGER, pad TEXT, b INTEGER, c INTEGER); BEGIN;";
    const int64_t edges[] = {0,
                             1,
                             -1,
                             127,
                             -128,
                             255,
                             32767,
                             -32768,
                             8388607,
                             -8388608,
                             2147483647,
                             -2147483648LL,
                             int64_t{1} << 40,
                             -(int64_t{1} << 47),
                             std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min()};
    for (int i = 0; i < 30000; ++i) {
        const int64_t a = edges[i % 16];
        const std::string b = i % 7 == 0 ? "NULL" : std::to_string(i % 11);
        // The column not asked for holds text, a blob, a real or nothing.
        const char* pads[] = {"'x'", "x'00ff'", "2.5", "NULL", "'a longer piece of text'"};
        sql += "INSERT INTO T VALUES (" + std::to_string(a) + ", " + pads[i % 5] + ", " + b + ", " +
               std::to_string(int64_t{i} * 1000003 - (int64_t{1} << 40)) + ");";
    }
    sql += "COMMIT; DELETE FROM T WHERE rowid % 13 = 0;";  // rowids with gaps
    execSql(path, sql);

    // b's NULL read as coalesce() reads it; a column the table lacks as the
    // literal selected in its place.
    const PagesRead pages = readFromPages(path, "T", {"c", "a", {"b", 0, -7}, {"absent", 42, 0}});
    ASSERT_TRUE(pages.opened);
    ASSERT_TRUE(pages.ok);
    const Rows expected = readWithSqlite(path, "T", {"c", "a", "coalesce(b, -7)", "42"});
    ASSERT_EQ(expected.size(), 30000u - 30000u / 13);
    EXPECT_EQ(pages.rows, expected);
}

TEST(CaptureIoPages, SaysNoWhereSqliteMustDecide) {
    TempDir dir;
    struct Case {
        const char* name;
        const char* sql;
        std::vector<sqlread::PageColumn> columns;
        bool opens;  // false: open() says no; true: open() agrees, scan() says no
    };
    const std::vector<Case> cases = {
        {"integer primary key",
         "CREATE TABLE T (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO T VALUES (5, 1);",
         {"id", "v"},
         false},
        {"without rowid",
         "CREATE TABLE T (k INTEGER PRIMARY KEY, v INTEGER) WITHOUT ROWID; INSERT INTO T VALUES (1, 2);",
         {"v"},
         false},
        {"text", "CREATE TABLE T (a INTEGER); INSERT INTO T VALUES (1); INSERT INTO T VALUES ('twelve');", {"a"}, true},
        {"real", "CREATE TABLE T (a); INSERT INTO T VALUES (1); INSERT INTO T VALUES (1.5);", {"a"}, true},
        {"overflow page",
         "PRAGMA page_size=512; CREATE TABLE T (a INTEGER, big BLOB); INSERT INTO T VALUES (1, zeroblob(2000));",
         {"a"},
         true},
        {"a row older than a column",
         "CREATE TABLE T (a INTEGER); INSERT INTO T VALUES (1); ALTER TABLE T ADD COLUMN b INTEGER DEFAULT 5;",
         {"a", "b"},
         true},
    };
    int n = 0;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const auto path = dir / ("case" + std::to_string(n++) + ".sqlite");
        execSql(path, c.sql);
        const PagesRead pages = readFromPages(path, "T", c.columns);
        EXPECT_EQ(pages.opened, c.opens);
        EXPECT_FALSE(pages.ok);
    }
    // A journal beside the file: its pages, not the file's, may be the truth.
    const auto path = dir / "journal.sqlite";
    execSql(path, "CREATE TABLE T (a INTEGER); INSERT INTO T VALUES (1);");
    EXPECT_TRUE(readFromPages(path, "T", {"a"}).ok);
    std::ofstream(path + "-journal").put('\0');
    EXPECT_FALSE(readFromPages(path, "T", {"a"}).opened);
}

// Kernels and, three to a kernel, the API calls around them.
void writeCapture(const std::string& path, int kernels) {
    auto w = CaptureWriter::create(path, 0);
    ApiCallRow a;
    const char* calls[] = {"cudaLaunchKernel", "cuLaunchKernelEx", "cudaStreamSynchronize"};
    for (int i = 0; i < 3 * kernels; ++i) {
        a.globalTid = schema::packGlobalTid(i % 7 == 3 ? 600 : 500, 11 + i % 3);
        a.start = int64_t{i} * 333;
        a.end = a.start + 100 + i % 50;
        a.correlationId = static_cast<uint32_t>(i);
        a.name = calls[i % 3];
        a.kind = i % 3 == 1 ? ApiKind::Driver : ApiKind::Runtime;
        a.returnValue = i % 97 == 0 ? 700 : 0;
        w->addApiCall(a);
    }
    KernelRow k;
    for (int i = 0; i < kernels; ++i) {
        k.globalPid = schema::packGlobalPid(i % 3 == 2 ? 600 : 500);
        k.deviceId = static_cast<uint32_t>(i % 2);
        k.streamId = static_cast<uint32_t>(7 + i % 4);
        k.start = int64_t{i} * 1000 + (i % 5) * 3;
        k.end = k.start + 600 + (i % 9) * 70;
        k.correlationId = static_cast<uint32_t>(i * 3);
        k.gridX = static_cast<uint32_t>(1 + i % 6);
        k.demangledName = i % 5 ? "compute" : "ncclDevKernel_AllReduce";
        w->addKernel(k);
    }
    w->close();
}

struct Loaded {
    std::string error;  // empty when it loaded
    Capture capture;
};

Loaded load(const std::string& path, bool fromPages, const LoadOptions& options = {}) {
    const bool saved = sqlread::readTablePagesDirectly;
    sqlread::readTablePagesDirectly = fromPages;
    Loaded out;
    try {
        readSqliteCapture(path, options, out.capture);
    } catch (const CaptureError& e) {
        out.error = e.what();
    }
    sqlread::readTablePagesDirectly = saved;
    return out;
}

// Names by their text: the two captures number their strings alike, but
// need not.
void expectSameNames(const Capture& a, const std::vector<uint32_t>& x, const Capture& b,
                     const std::vector<uint32_t>& y) {
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(a.strings.at(x[i]), b.strings.at(y[i]));
}

// Every table read from pages, compared column by column.
void expectSameRows(const Capture& a, const Capture& b) {
    ASSERT_EQ(a.processes.size(), b.processes.size());
    for (size_t p = 0; p < a.processes.size(); ++p) {
        ASSERT_EQ(a.processes[p].pid, b.processes[p].pid);
        ASSERT_EQ(a.processes[p].devices.size(), b.processes[p].devices.size());
        for (size_t d = 0; d < a.processes[p].devices.size(); ++d) {
            const KernelTable& x = a.processes[p].devices[d].kernels;
            const KernelTable& y = b.processes[p].devices[d].kernels;
            EXPECT_EQ(x.start, y.start);
            EXPECT_EQ(x.end, y.end);
            EXPECT_EQ(x.stream, y.stream);
            EXPECT_EQ(x.correlation, y.correlation);
            EXPECT_EQ(x.gridX, y.gridX);
            EXPECT_EQ(x.blockZ, y.blockZ);
            EXPECT_EQ(x.registersPerThread, y.registersPerThread);
            EXPECT_EQ(x.graphId, y.graphId);
            EXPECT_EQ(x.graphNodeId, y.graphNodeId);
            expectSameNames(a, x.name, b, y.name);
            expectSameNames(a, x.shortName, b, y.shortName);
            const CopyTable& cx = a.processes[p].devices[d].copies;
            const CopyTable& cy = b.processes[p].devices[d].copies;
            EXPECT_EQ(cx.start, cy.start);
            EXPECT_EQ(cx.bytes, cy.bytes);
            EXPECT_EQ(cx.copyKind, cy.copyKind);
            EXPECT_EQ(cx.srcDevice, cy.srcDevice);
            EXPECT_EQ(cx.dstDevice, cy.dstDevice);
            const MemsetTable& mx = a.processes[p].devices[d].memsets;
            const MemsetTable& my = b.processes[p].devices[d].memsets;
            EXPECT_EQ(mx.start, my.start);
            EXPECT_EQ(mx.bytes, my.bytes);
            EXPECT_EQ(mx.value, my.value);
        }
        const ApiCallTable& x = a.processes[p].apiCalls;
        const ApiCallTable& y = b.processes[p].apiCalls;
        EXPECT_EQ(x.start, y.start);
        EXPECT_EQ(x.end, y.end);
        EXPECT_EQ(x.globalTid, y.globalTid);
        EXPECT_EQ(x.correlation, y.correlation);
        EXPECT_EQ(x.returnValue, y.returnValue);
        EXPECT_EQ(x.kind, y.kind);
        expectSameNames(a, x.name, b, y.name);
    }
}

TEST(CaptureIoPages, AFinishedCaptureIsReadFromItsPagesAsSqliteReadsIt) {
    TempDir dir;
    const auto path = dir / "capture.sqlite";
    writeCapture(path, 20000);
    // Else the fast path is never taken and the comparisons below prove nothing.
    for (const char* table : {"OVERLAPSCOPE_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"}) {
        const PagesRead pages = readFromPages(path, table, {"start", "end", "correlationId"});
        ASSERT_TRUE(pages.opened) << table;
        ASSERT_TRUE(pages.ok) << table;
        EXPECT_EQ(pages.rows, readWithSqlite(path, table, {"start", "end", "correlationId"}));
    }
    for (int64_t threshold : {int64_t{1000}, int64_t{1} << 40}) {  // two threads, one
        SCOPED_TRACE(threshold);
        const int64_t saved = sqlread::parallelScanMinRows;
        sqlread::parallelScanMinRows = threshold;
        const Loaded fast = load(path, true), slow = load(path, false);
        sqlread::parallelScanMinRows = saved;
        ASSERT_EQ(fast.error, "");
        ASSERT_EQ(slow.error, "");
        expectSameRows(fast.capture, slow.capture);
        size_t kernels = 0, calls = 0;
        for (const auto& p : fast.capture.processes) {
            calls += p.apiCalls.size();
            for (const auto& d : p.devices) kernels += d.kernels.size();
        }
        EXPECT_EQ(kernels, 20000u);
        EXPECT_EQ(calls, 60000u);
    }
}

// Nsight Systems' wide tables, as exports have them and as older ones lack
// columns: NULLs, a column missing, the short name missing (the long one
// then read for both), on one thread and two.
TEST(CaptureIoPages, NsysTablesFromPagesAsThroughSqlite) {
    TempDir dir;
    const std::string rows = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999) ";
    const std::string pid = "(16777216 * (1 + i % 2))";  // two processes
    const std::string common =
        R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), (3, 'cudaLaunchKernel'),
  (4, 'cuLaunchKernel'), (5, 'ag');
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER, copyKind INTEGER, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER);
)" + rows +
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT i * 500, i * 500 + 90, i % 3, 1, NULL, 20 + i % 2, i, " + pid +
        ", i * 4096, 1 + i % 8, NULL, 1, 2, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 4 END FROM n;" +
        R"(
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER);
)" + rows +
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET SELECT i * 700, i * 700 + 30, i % 3, 1, 5, i, " + pid +
        ", CASE WHEN i % 9 = 0 THEN NULL ELSE i % 256 END, i * 64 FROM n;" + R"(
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
)" + rows +
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT i * 300, i * 300 + 50, CASE i % 4 WHEN 0 THEN NULL " +
        "WHEN 1 THEN 1 ELSE 0 END, " + pid + " + 77, i, CASE WHEN i % 11 = 0 THEN NULL ELSE 3 + i % 2 END FROM n;";
    // The kernel table in an export's column order, and an older one.
    const std::string full = R"(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER, localMemoryTotal INTEGER, gridId INTEGER, sharedMemoryExecuted INTEGER,
  graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
)" + rows + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 1000, i * 1000 + 600, i % 3, 1, NULL, 7 + i % 4, i, " +
                             pid + ", 1 + i % 2, 5, NULL, 0, 0, 32 + i % 64, 1 + i % 6, 1, 1, 128, 1, 1 + i % 2, 0, " +
                             "i % 3 * 1024, 0, 0, i, 0, CASE WHEN i % 13 = 0 THEN i ELSE NULL END, 0 FROM n;";
    const std::string old = R"(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
  gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
)" + rows + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 1000, i * 1000 + 600, i % 3, 1, 7 + i % 4, i, " +
                            pid + ", CASE WHEN i % 7 = 0 THEN NULL ELSE 1 + i % 2 END, CASE WHEN i % 5 = 0 THEN NULL " +
                            "ELSE 1 + i % 6 END, 1, 1, 128, 1, 2 FROM n;";
    int n = 0;
    for (const std::string& kernelTable : {full, old}) {
        const auto path = dir / ("export" + std::to_string(n++) + ".sqlite");
        execSql(path, "PRAGMA page_size=1024;" + common + kernelTable);
        for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                  "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME"})
            ASSERT_TRUE(readFromPages(path, table, {"start", "end"}).ok) << table;  // the fast path is taken
        for (int64_t threshold : {int64_t{1000}, int64_t{1} << 40}) {
            for (bool shapeOnly : {false, true}) {
                SCOPED_TRACE(path + " threshold " + std::to_string(threshold) + (shapeOnly ? " shape" : " all"));
                const int64_t saved = sqlread::parallelScanMinRows;
                sqlread::parallelScanMinRows = threshold;
                LoadOptions options;
                options.launchShapeOnly = shapeOnly;
                const Loaded fast = load(path, true, options), slow = load(path, false, options);
                sqlread::parallelScanMinRows = saved;
                ASSERT_EQ(fast.error, "");
                ASSERT_EQ(slow.error, "");
                expectSameRows(fast.capture, slow.capture);
                size_t kernels = 0, copies = 0;
                for (const auto& p : fast.capture.processes)
                    for (const auto& d : p.devices) {
                        kernels += d.kernels.size();
                        copies += d.copies.size();
                    }
                EXPECT_EQ(kernels, 5000u);
                EXPECT_EQ(copies, 5000u);
            }
        }
    }
}

// Damage anywhere in the pages of the tables read from pages: the capture
// loads, or is refused, exactly as when SQLite reads every row.
TEST(CaptureIoPages, DamagedPagesLoadAsThroughSqlite) {
    TempDir dir;
    const auto original = dir / "capture.sqlite";
    writeCapture(original, 8000);
    std::vector<int64_t> pageNumbers;
    ASSERT_TRUE(forEachRow(original,
                           "SELECT pageno FROM dbstat WHERE name IN ('OVERLAPSCOPE_KERNEL', "
                           "'CUPTI_ACTIVITY_KIND_RUNTIME')",
                           [&](sqlite3_stmt* st) { pageNumbers.push_back(sqlite3_column_int64(st, 0)); }));
    ASSERT_GE(pageNumbers.size(), 3u);  // a root and its leaves
    std::ifstream in(original, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    constexpr size_t kPage = 65536;  // the writer's page size
    const int64_t saved = sqlread::parallelScanMinRows;
    sqlread::parallelScanMinRows = 1000;
    std::mt19937_64 random(46);
    int refused = 0, loaded = 0;
    for (int round = 0; round < 200; ++round) {
        std::string damaged = bytes;
        const int flips = 1 + static_cast<int>(random() % 4);
        std::string where;
        for (int f = 0; f < flips; ++f) {
            const auto page = static_cast<size_t>(pageNumbers[random() % pageNumbers.size()]);
            // Half the damage in the page's header and cell pointers, where a
            // byte decides the most.
            const size_t within = random() % 2 ? random() % 64 : random() % kPage;
            const size_t at = (page - 1) * kPage + within;
            if (at >= damaged.size()) continue;
            damaged[at] = static_cast<char>(random() % 4 ? damaged[at] ^ (1 << (random() % 8)) : random());
            where += " page " + std::to_string(page) + " +" + std::to_string(within);
        }
        const auto path = dir / ("damaged" + std::to_string(round) + ".sqlite");
        std::ofstream(path, std::ios::binary) << damaged;
        SCOPED_TRACE("round " + std::to_string(round) + ":" + where);
        const Loaded fast = load(path, true), slow = load(path, false);
        ASSERT_EQ(fast.error, slow.error);
        if (fast.error.empty()) {
            expectSameRows(fast.capture, slow.capture);
            ++loaded;
        } else {
            ++refused;
        }
        std::filesystem::remove(path);
    }
    sqlread::parallelScanMinRows = saved;
    // Both outcomes were met, or the damage tested nothing.
    EXPECT_GT(refused, 0);
    EXPECT_GT(loaded, 0);
}

}  // namespace
}  // namespace osc

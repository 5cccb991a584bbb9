// Issue 28 items 1 and 2: Nsight Systems exports as users have them. A file
// trimmed to the strings it uses loads (its StringIds ids are sparse, which
// is no damage), and a process gets devices only where it ran GPU work.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/sqlite_read_context.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/crossrank/analyze.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

#include <string>

namespace osc {
namespace {

using testing_io::execSql;
using testsupport::TempDir;

constexpr uint64_t kPidA = 1001ull << 24, kPidB = 1002ull << 24;

const char* kNsysTables = R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER, eventId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, correlationId INTEGER,
  nameId INTEGER, returnValue INTEGER);
)";

// A trimmed export: 126 strings whose ids run up to 3.4 million (what a
// script that drops unused strings leaves), and one kernel per string.
void writeTrimmedExport(const std::string& path) {
    std::string sql = kNsysTables;
    sql += "INSERT INTO PROCESSES VALUES (" + std::to_string(kPidA) + ", 1001, 'python');";
    for (int i = 0; i < 126; ++i) {
        const int64_t id = 7 + static_cast<int64_t>(i) * 27'200;  // 7 ... 3,407,007
        sql += "INSERT INTO StringIds VALUES (" + std::to_string(id) + ", 'kernel_" + std::to_string(i) + "');";
        sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(i * 100) + ", " +
               std::to_string(i * 100 + 50) + ", 0, 7, " + std::to_string(i) + ", " + std::to_string(kPidA) + ", " +
               std::to_string(id) + ", " + std::to_string(id) + ");";
    }
    execSql(path, "BEGIN;" + sql + "COMMIT;");
}

TEST(NsysOddExports, TrimmedStringIdsLoadWithMemoryBoundedByTheRows) {
    TempDir dir;
    const auto path = dir / "trimmed.sqlite";
    writeTrimmedExport(path);
    Capture c;
    readSqliteCapture(path, {}, c);
    ASSERT_EQ(c.processes.size(), 1u);
    ASSERT_EQ(c.processes[0].devices.size(), 1u);
    const KernelTable& k = c.processes[0].devices[0].kernels;
    ASSERT_EQ(k.size(), 126u);
    for (size_t i = 0; i < k.size(); ++i) EXPECT_EQ(c.strings.at(k.name[i]), "kernel_" + std::to_string(i));

    // The id lookup holds one entry per string, not one per id up to 3.4 M.
    Capture scratch;
    sqlread::ReadContext ctx(path, {}, scratch);
    ctx.loadStrings();
    EXPECT_FALSE(ctx.stringIds().dense());
    EXPECT_EQ(ctx.stringIds().slots(), 126u);
    EXPECT_EQ(scratch.strings.at(ctx.name(7 + 125 * 27'200)), "kernel_125");
    EXPECT_EQ(scratch.strings.at(ctx.name(8)), "");  // an id the table does not have
}

TEST(NsysOddExports, DenseStringIdsStayInAVector) {
    TempDir dir;
    const auto path = dir / "dense.sqlite";
    execSql(path, std::string(kNsysTables) + "INSERT INTO StringIds VALUES (0, 'a'), (1, 'b'), (5, 'c');");
    Capture scratch;
    sqlread::ReadContext ctx(path, {}, scratch);
    ctx.loadStrings();
    EXPECT_TRUE(ctx.stringIds().dense());
    EXPECT_EQ(scratch.strings.at(ctx.name(5)), "c");
}

// Damage is still refused: an id that is not an integer.
TEST(NsysOddExports, TextStringIdIsStillDamage) {
    TempDir dir;
    const auto path = dir / "damaged.sqlite";
    writeTrimmedExport(path);
    execSql(path,
            "CREATE TABLE s2 (id, value); INSERT INTO s2 SELECT id, value FROM StringIds; "
            "INSERT INTO s2 VALUES ('x', 'y'); DROP TABLE StringIds; ALTER TABLE s2 RENAME TO StringIds;");
    Capture c;
    try {
        readSqliteCapture(path, {}, c);
        ADD_FAILURE() << "a text id was read";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("StringIds"), std::string::npos) << e.what();
    }
}

// Two ranks, each on its own GPU; rank B first made a context on GPU 0
// (synchronisations there, no work). B's only device is GPU 1.
void writeTwoRankExport(const std::string& path) {
    std::string sql = kNsysTables;
    const std::string a = std::to_string(kPidA), b = std::to_string(kPidB);
    sql += "INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'cudaLaunchKernel'), (3, 'cudaDeviceSynchronize');";
    sql += "INSERT INTO PROCESSES VALUES (" + a + ", 1001, 'python'), (" + b + ", 1002, 'python');";
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 7, 1, " + a + ", 1, 1), (300, 400, 1, 7, 2, " +
           b + ", 1, 1);";
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (50, 60, 0, 1, NULL, 9, " + b + ", 4, NULL);";
    sql += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (90, 95, " + std::to_string(kPidA | 5) +
           ", 1, 2, 0), (290, 295, " + std::to_string(kPidB | 6) + ", 2, 2, 0), (40, 70, " + std::to_string(kPidB | 6) +
           ", 9, 3, 0);";
    execSql(path, sql);
}

TEST(NsysOddExports, NoDeviceWhereAProcessRanNoWork) {
    TempDir dir;
    const auto path = dir / "two_ranks.sqlite";
    writeTwoRankExport(path);
    Capture c;
    readSqliteCapture(path, {}, c);
    c.finalize();
    ASSERT_EQ(c.processes.size(), 2u);
    for (const Process& p : c.processes) {
        ASSERT_EQ(p.devices.size(), 1u) << p.pid;
        EXPECT_EQ(p.devices[0].id, p.pid == 1001 ? 0u : 1u);
        EXPECT_EQ(p.devices[0].kernels.size(), 1u);
    }
    // B's host calls stay with B (its only device is GPU 1).
    EXPECT_EQ(c.processes[1].apiCalls.size(), 2u);
    const Analysis a = analyze(c, {});
    ASSERT_EQ(a.devices.size(), 2u);
    EXPECT_EQ(a.summary.window_ns, 200);  // 100 + 100: no empty device in the totals
}

}  // namespace
}  // namespace osc

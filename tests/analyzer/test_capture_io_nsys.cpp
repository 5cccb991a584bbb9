// Reading Nsight Systems exports: a file made by hand with raw SQL in the
// shapes nsys has produced over the years (old TARGET_INFO_CUDA_GPU, names
// through textId, two processes in one file, absent tables and columns,
// CUDA graphs traced whole). Expected values are worked out by hand below.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/schema.h"
#include "analyzer/capture/sqlite_reader.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

namespace osc {
namespace {

using testing_io::byPid;
using testing_io::execSql;
using testsupport::TempDir;

// Hardware id 1 in the top byte: the pid must still come out of bits 24..47.
constexpr uint64_t kHw = 1ull << 56;
constexpr uint64_t kPidA = kHw | (1001ull << 24);
constexpr uint64_t kPidB = kHw | (1002ull << 24);
constexpr uint64_t kLauncher = kHw | (999ull << 24);

std::string n(uint64_t v) { return std::to_string(v); }

void makeNsysExport(const std::string& path) {
    const std::string a = n(kPidA), b = n(kPidB);
    const std::string ta = n(kPidA | 1001), tb = n(kPidB | 1002), ta2 = n(kPidA | 1010);
    execSql(path, R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES
  (1, 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)'),
  (2, 'void gemm_kernel<128>(float*)'), (3, 'cudaLaunchKernel_v7000'), (4, 'cuLaunchKernelEx'),
  (5, 'ncclAllReduce'), (6, 'gemm_kernel'), (7, 'ncclKernel_AllReduce_RING_LL_Sum_float'),
  (8, 'cudaStreamSynchronize_v3020');
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '2.7.1');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1600000000000000000, 'x', 'y');
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT,
                                     nameEnum INTEGER, value TEXT);
INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'x', 'OsName', 1, 'Linux'),
                                          (0, 'x', 'Hostname', 2, 'dgx-a');
CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId INTEGER, name TEXT, busLocation TEXT,
  totalMemory INTEGER, numMultiprocessors INTEGER, computeCapabilityMajor INTEGER,
  computeCapabilityMinor INTEGER);
INSERT INTO TARGET_INFO_CUDA_GPU VALUES (0, 'Tesla V100', '0000:06:00.0', 34089730048, 80, 7, 0),
                                        (1, 'Tesla V100', '0000:07:00.0', 34089730048, 80, 7, 0),
                                        (3, 'Unused', '0000:09:00.0', 1, 80, 7, 0);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES ()" +
                      a + R"(, 1001, 'python'), ()" + b + R"(, 1002, 'python'),
                             ()" +
                      n(kLauncher) + R"(, 999, 'bash');
CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER);
INSERT INTO MPI_RANKS VALUES ()" +
                      ta + R"(, 0), ()" + tb + R"(, 1);
-- An old kernel table: no graphId/graphNodeId, no shared-memory columns.
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER, gridY INTEGER,
  gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (100, 200, 0, 1, 7, 11, )" +
                      a + R"(, 2, 6, 8, 1, 1, 128, 1, 1, 32),
  (150, 400, 0, 1, 13, 12, )" +
                      a + R"(, 1, 7, 2, 1, 1, 640, 1, 1, 96),
  (120, 220, 0, 1, 7, 21, )" +
                      b + R"(, 2, 6, 8, 1, 1, 128, 1, 1, 32),
  (300, 350, 1, 2, 7, 13, )" +
                      a + R"(, 2, 6, 4, 1, 1, 64, 1, 1, 32),
  (500, 900, 0, 1, 13, 22, )" +
                      b + R"(, 1, 7, 2, 1, 1, 640, 1, 1, 96),
  (600, 650, 0, 1, 7, 14, )" +
                      a + R"(, 2, NULL, 8, 1, 1, 128, 1, 1, 32);
-- No srcDeviceId/dstDeviceId columns in this version.
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (10, 60, 1, 2, 7, 9, )" +
                      a + R"(, 4096, 1, 2, 3);
-- Runtime and driver calls with no eventClass column: the name decides.
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (90, 99, )" + ta + R"(, 11, 3, 0), (140, 149, )" +
                      ta2 + R"(, 12, 4, 0),
  (110, 119, )" + tb + R"(, 21, 3, 0), (700, 950, )" +
                      ta + R"(, 15, 8, 0);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES
  (1, NULL, 75, NULL, NULL, NULL, 'NCCL', )" +
                      ta2 + R"(, NULL, NULL, 1),
  (2, NULL, 39, NULL, NULL, NULL, 'main thread', )" +
                      ta + R"(, NULL, NULL, 0),
  (50, 1000, 59, NULL, NULL, -16711936, 'step 0', )" +
                      ta + R"(, NULL, NULL, 0),
  (130, 160, 59, NULL, 3, NULL, NULL, )" +
                      ta2 + R"(, NULL, 5, 1),
  (170, NULL, 60, 9, NULL, NULL, 'never ended', )" +
                      ta + R"(, NULL, NULL, 0),
  (180, NULL, 34, NULL, NULL, NULL, 'a mark', )" +
                      ta + R"(, NULL, NULL, 0),
  (60, 990, 59, NULL, NULL, NULL, 'step 0', )" +
                      tb + R"(, NULL, NULL, 0);
-- Graphs traced whole: replays, but no kernel carries a graph node id.
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER, end INTEGER, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  graphId INTEGER, graphExecId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (1000, 2000, 0, 1, 7, 30, )" +
                      a + R"(, 1, 1);
)");
}

TEST(CaptureIoNsys, HandMadeExportSplitsIntoProcessesAndDevices) {
    TempDir dir;
    const auto path = dir / "report.sqlite";
    makeNsysExport(path);
    Capture c;
    readSqliteCapture(path, {}, c);

    // The launcher process had no activity: left out.
    ASSERT_EQ(c.processes.size(), 2u);
    const auto& a = byPid(c, 1001);
    const auto& b = byPid(c, 1002);
    for (const auto* p : {&a, &b}) {
        EXPECT_EQ(p->host, "dgx-a");
        EXPECT_EQ(p->name, "python");
        EXPECT_EQ(p->sessionStartUtcNs, 1'600'000'000'000'000'000);
        EXPECT_EQ(p->meta.at("EXPORT_SCHEMA_VERSION"), "2.7.1");
        EXPECT_EQ(p->sourcePath, path);
    }
    EXPECT_EQ(a.rank, 0);
    EXPECT_EQ(b.rank, 1);

    // Process A: device 0 has kernels corr 11, 12, 14; device 1 has corr 13 and a copy.
    ASSERT_EQ(a.devices.size(), 2u);
    const auto& a0 = a.devices[0];
    const auto& a1 = a.devices[1];
    EXPECT_EQ(a0.id, 0u);
    EXPECT_EQ(a1.id, 1u);
    EXPECT_EQ(a0.kernels.correlation, (std::vector<uint32_t>{11, 12, 14}));
    EXPECT_EQ(a0.kernels.start, (std::vector<TimeNs>{100, 150, 600}));
    EXPECT_EQ(a0.kernels.end, (std::vector<TimeNs>{200, 400, 650}));
    EXPECT_EQ(a0.kernels.stream, (std::vector<uint32_t>{7, 13, 7}));
    EXPECT_EQ(a0.kernels.gridX, (std::vector<uint32_t>{8, 2, 8}));
    EXPECT_EQ(a0.kernels.blockX, (std::vector<uint32_t>{128, 640, 128}));
    EXPECT_EQ(a0.kernels.registersPerThread, (std::vector<uint32_t>{32, 96, 32}));
    // Absent columns read as their "none" values.
    EXPECT_EQ(a0.kernels.staticSharedMemory, (std::vector<uint32_t>{0, 0, 0}));
    EXPECT_EQ(a0.kernels.graphNodeId, (std::vector<uint64_t>{0, 0, 0}));
    EXPECT_EQ(c.strings.at(a0.kernels.name[1]),
              "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
    EXPECT_EQ(c.strings.at(a0.kernels.shortName[1]), "ncclKernel_AllReduce_RING_LL_Sum_float");
    EXPECT_EQ(c.strings.at(a0.kernels.shortName[2]), "");  // NULL name id
    EXPECT_EQ(a1.kernels.correlation, (std::vector<uint32_t>{13}));
    ASSERT_EQ(a1.copies.size(), 1u);
    EXPECT_EQ(a1.copies.bytes[0], 4096u);
    EXPECT_EQ(a1.copies.copyKind[0], CopyKind::HtoD);
    EXPECT_EQ(a1.copies.srcKind[0], MemKind::Pinned);
    EXPECT_EQ(a1.copies.dstKind[0], MemKind::Device);
    EXPECT_EQ(a1.copies.srcDevice[0], kNoId);
    EXPECT_EQ(a1.copies.dstDevice[0], kNoId);
    EXPECT_EQ(a0.memsets.size() + a0.syncs.size(), 0u);  // tables absent
    // GPU descriptions from the old table, by device id.
    EXPECT_EQ(a0.gpu.name, "Tesla V100");
    EXPECT_EQ(a1.gpu.busLocation, "0000:07:00.0");
    EXPECT_EQ(a1.gpu.smCount, 80);
    EXPECT_EQ(a1.gpu.computeMajor, 7);
    EXPECT_EQ(a1.gpu.totalMemory, 34089730048u);

    // Process B: device 0 only (nsys lists every GPU; idle ones are not devices).
    ASSERT_EQ(b.devices.size(), 1u);
    EXPECT_EQ(b.devices[0].kernels.correlation, (std::vector<uint32_t>{21, 22}));

    // API calls: split by the pid inside globalTid; driver told apart by name.
    EXPECT_EQ(a.apiCalls.correlation, (std::vector<uint32_t>{11, 12, 15}));
    EXPECT_EQ(a.apiCalls.kind, (std::vector<ApiKind>{ApiKind::Runtime, ApiKind::Driver, ApiKind::Runtime}));
    EXPECT_EQ(c.strings.at(a.apiCalls.name[1]), "cuLaunchKernelEx");
    EXPECT_EQ(a.apiCalls.globalTid[1], kPidA | 1010);
    EXPECT_EQ(b.apiCalls.correlation, (std::vector<uint32_t>{21}));

    // NVTX: domain creation and thread-name rows are not ranges.
    const auto& r = a.ranges;
    ASSERT_EQ(r.size(), 4u);
    EXPECT_EQ(c.strings.at(r.name[0]), "step 0");
    EXPECT_EQ(r.kind[0], RangeKind::PushPop);
    EXPECT_EQ(r.domain[0], kNoId);
    EXPECT_EQ(r.color[0], 0xFF00FF00u);                   // nsys stores ARGB as a signed 32-bit value
    EXPECT_EQ(c.strings.at(r.name[1]), "ncclAllReduce");  // registered string via textId
    EXPECT_EQ(c.strings.at(r.domain[1]), "NCCL");
    EXPECT_EQ(r.category[1], 3u);
    EXPECT_EQ(r.start[1], 130);
    EXPECT_EQ(r.end[1], 160);
    EXPECT_EQ(r.kind[2], RangeKind::StartEnd);
    EXPECT_EQ(r.start[2], 170);
    EXPECT_EQ(r.end[2], 170);  // unfinished: ends where it starts
    EXPECT_EQ(r.kind[3], RangeKind::Mark);
    EXPECT_EQ(r.end[3], 180);
    EXPECT_EQ(b.ranges.size(), 1u);

    // Whole-graph tracing hides kernels: the user is told once, naming the file.
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_EQ(c.warnings[0], path +
                                 ": CUDA graphs were traced as whole graphs: their kernels (and NCCL kernels "
                                 "inside) are invisible; re-run nsys with --cuda-graph-trace=node");
}

TEST(CaptureIoNsys, GraphTraceWithPerNodeKernelsGivesNoWarning) {
    TempDir dir;
    const auto path = dir / "nodes.sqlite";
    execSql(path, R"(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, globalPid INTEGER, graphNodeId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 16777216, 55), (3, 4, 0, 7, 16777216, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER, end INTEGER, deviceId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (1, 5, 0);
)");
    Capture c;
    readSqliteCapture(path, {}, c);
    EXPECT_TRUE(c.warnings.empty());
    ASSERT_EQ(c.processes.size(), 1u);
    EXPECT_EQ(c.processes[0].pid, 1);
    EXPECT_EQ(c.processes[0].devices[0].kernels.graphNodeId, (std::vector<uint64_t>{55, 0}));
    // No StringIds table at all: names are empty, not garbage.
    EXPECT_EQ(c.strings.at(c.processes[0].devices[0].kernels.name[0]), "");
}

TEST(CaptureIoNsys, DriverAndRuntimeByEventClassWhenPresent) {
    TempDir dir;
    const auto path = dir / "class.sqlite";
    // eventClass 0/1 wins over the name; other classes (cuBLAS, cuDNN, ...)
    // fall back to the name.
    execSql(path, R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (0, 'cuLaunchKernel'), (1, 'cudaMalloc_v3020'), (2, 'cuMemAlloc_v2');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, 0, 16777217, 1, 0, 0),
  (3, 4, 1, 16777217, 2, 1, 0), (5, 6, 28, 16777217, 3, 2, 0), (7, 8, 28, 16777217, 4, 1, 2);
)");
    Capture c;
    readSqliteCapture(path, {}, c);
    ASSERT_EQ(c.processes.size(), 1u);
    EXPECT_EQ(c.processes[0].apiCalls.kind,
              (std::vector<ApiKind>{ApiKind::Runtime, ApiKind::Driver, ApiKind::Driver, ApiKind::Runtime}));
    EXPECT_EQ(c.processes[0].apiCalls.returnValue, (std::vector<int32_t>{0, 0, 0, 2}));
}

}  // namespace
}  // namespace osc

// The patterns of docs/metrics.md sections 7d-7f from the inputs other tools
// write: a hand-made Nsight Systems export (no plugin rows: the bubble is
// known, the peers are not) and PyTorch profiler traces carrying the
// collective arguments torch.distributed puts on NCCL kernels. The expected
// values are Examples 6-8 of docs/metrics.md, worked out by hand there.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/import/kineto_comm_args.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

#include <fstream>

namespace osc {
namespace {

using testing_io::execSql;
using testsupport::TempDir;

constexpr TimeNs us(TimeNs v) { return v * 1000; }
constexpr uint64_t MiB = 1 << 20;
std::string n(int64_t v) { return std::to_string(v); }

// Example 7 (balanced): two stages, each micro-batch's compute launched in
// its `fwd mb N` / `bwd mb N` range; plus one SendRecv kernel per stage that
// no row describes. Times in µs from the session start.
void makePipelineExport(const std::string& path) {
    const int64_t pidA = 2001LL << 24, pidB = 2002LL << 24;
    const int64_t ta = pidA | 2001, tb = pidB | 2002;
    struct Mb {
        int64_t tid, pid;
        const char* name;
        TimeNs start, end;
    };
    const Mb mbs[] = {{ta, pidA, "fwd mb 0", 0, 10},  {ta, pidA, "fwd mb 1", 10, 20}, {ta, pidA, "bwd mb 0", 40, 60},
                      {ta, pidA, "bwd mb 1", 70, 90}, {tb, pidB, "fwd mb 0", 10, 20}, {tb, pidB, "bwd mb 0", 20, 40},
                      {tb, pidB, "fwd mb 1", 40, 50}, {tb, pidB, "bwd mb 1", 50, 70}};
    std::string kernels, calls, ranges;
    int corr = 1;
    for (const auto& m : mbs) {
        const TimeNs cpu = us(1000) + us(10) * corr;  // launches well before the GPU runs them
        kernels += std::string(kernels.empty() ? "" : ",") + "(" + n(us(m.start)) + ", " + n(us(m.end)) +
                   ", 0, 1, 7, " + n(corr) + ", " + n(m.pid) + ", 1, 1)";
        calls += std::string(calls.empty() ? "" : ",") + "(" + n(cpu + 1) + ", " + n(cpu + 2) + ", " + n(m.tid) + ", " +
                 n(corr) + ", 3, 0)";
        ranges += std::string(ranges.empty() ? "" : ",") + "(" + n(cpu) + ", " + n(cpu + 5) +
                  ", 59, NULL, NULL, NULL, '" + m.name + "', " + n(m.tid) + ", NULL, NULL, 0)";
        ++corr;
    }
    kernels += ", (" + n(us(20)) + ", " + n(us(40)) + ", 0, 1, 13, 90, " + n(pidA) + ", 2, 2)";
    kernels += ", (" + n(us(0)) + ", " + n(us(10)) + ", 0, 1, 13, 91, " + n(pidB) + ", 2, 2)";
    execSql(path, R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_tn'),
  (2, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'), (3, 'cudaLaunchKernel_v7000');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES ()" +
                      n(pidA) + R"(, 2001, 'python'), ()" + n(pidB) + R"(, 2002, 'python');
CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER);
INSERT INTO MPI_RANKS VALUES ()" +
                      n(ta) + R"(, 0), ()" + n(tb) + R"(, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER, shortName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES )" +
                      kernels + R"(;
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES )" +
                      calls + R"(;
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES )" +
                      ranges + R"(;
)");
}

TEST(PatternInputs, NsysExportGivesTheBubbleButNoPeers) {
    TempDir dir;
    const auto path = dir / "pipeline.sqlite";
    makePipelineExport(path);
    const Analysis a = analyze(loadCapture(path));
    ASSERT_EQ(a.devices.size(), 2u);
    EXPECT_EQ(a.devices[0].rank, 0);
    ASSERT_EQ(a.pipeline.size(), 1u);
    EXPECT_EQ(a.pipeline[0].stages, 2);
    EXPECT_EQ(a.pipeline[0].microbatches, 2);
    EXPECT_EQ(a.pipeline[0].end_ns - a.pipeline[0].start_ns, us(90));
    for (const auto& d : a.devices) {
        ASSERT_TRUE(d.pipeline);
        EXPECT_EQ(d.pipeline->bubble_ns, us(30));
        EXPECT_DOUBLE_EQ(*d.pipeline->bubble_share, 1.0 / 3.0);
    }
    EXPECT_EQ(a.devices[1].pipeline->fill_ns, us(10));
    EXPECT_EQ(a.devices[1].pipeline->drain_ns, us(20));
    // Without plugin rows the SendRecv kernels cannot be paired, and the report says so.
    EXPECT_TRUE(a.p2p.empty());
    EXPECT_TRUE(a.matched.empty());
    bool warned = false;
    for (const auto& w : a.warnings) warned |= w.find("2 SendRecv kernel(s) carry no peer") != std::string::npos;
    EXPECT_TRUE(warned);
}

// A PyTorch profiler trace of one rank with NCCL kernels carrying PyTorch's
// collective arguments (`args` text without the braces).
struct PtKernel {
    TimeNs start, end;
    std::string name, args;
};

std::string pytorchTrace(int rank, int worldSize, const std::vector<PtKernel>& kernels) {
    std::string out = "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + n(rank) +
                      ", \"world_size\": " + n(worldSize) + "}, \"baseTimeNanoseconds\": 1700000000000000000,\n" +
                      "\"traceEvents\": [\n";
    for (size_t i = 0; i < kernels.size(); ++i) {
        const auto& k = kernels[i];
        out += std::string(i ? ",\n" : "") + "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + k.name +
               "\", \"pid\": 0, \"tid\": 7, \"ts\": " + n(k.start / 1000) +
               ", \"dur\": " + n((k.end - k.start) / 1000) +
               ", \"args\": {\"device\": 0, \"stream\": " + (k.args.empty() ? "7" : "20") +
               ", \"correlation\": " + n(static_cast<int64_t>(i) + 1) + (k.args.empty() ? "" : ", " + k.args) + "}}";
    }
    return out + "\n]}\n";
}

const std::string kSendRecv = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
const std::string kGemm = "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_tn";

TEST(PatternInputs, PytorchSendAndRecvArgumentsPairUp) {
    // Example 6, first pair: rank 0 sends 1 MiB (262144 floats) to rank 1 at
    // [100, 160); rank 1 receives from [40, 160). "Dst Rank" as text, "Src Rank" as a number.
    TempDir dir;
    const std::string group =
        "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\", \"Group size\": 2, "
        "\"dtype\": \"Float\", \"In msg nelems\": 262144, \"Out msg nelems\": 262144";
    std::ofstream(dir / "rank0.json") << pytorchTrace(
        0, 2,
        {{us(0), us(100), kGemm, ""},
         {us(100), us(160), kSendRecv, group + ", \"Collective name\": \"send\", \"Dst Rank\": \"1\""},
         {us(120), us(220), kGemm, ""}});
    std::ofstream(dir / "rank1.json") << pytorchTrace(
        1, 2,
        {{us(40), us(160), kSendRecv, group + ", \"Collective name\": \"recv\", \"Src Rank\": 0"},
         {us(160), us(260), kGemm, ""}});
    const Analysis a = analyze(loadCaptures({dir / "rank0.json", dir / "rank1.json"}));
    ASSERT_EQ(a.devices.size(), 2u);
    ASSERT_EQ(a.p2p.size(), 1u);
    EXPECT_EQ(a.p2p[0].sender.first, 0);
    EXPECT_EQ(a.p2p[0].receiver.first, 1);
    EXPECT_EQ(a.p2p[0].bytes, MiB);
    EXPECT_EQ(a.devices[1].wait->comm_wait_ns, us(60));
    EXPECT_EQ(a.devices[1].wait->exposed_transfer_ns, us(60));
    EXPECT_EQ(a.devices[0].last_arrivals, 1);
    EXPECT_EQ(a.devices[0].delay_caused_ns, us(60));
}

// PyTorch writes "Dst Rank"/"Src Rank" as global ranks (groupRanks[peer]),
// and keeps only the first 30 of a longer "Process Group Ranks":
// "[0, 2, ..., 58, ...]". A 40-rank group of the even global ranks 0..78:
// global 2 is group rank 1 (in the prefix), global 70 group rank 35 (past
// it, found from the even spacing 0, 2, 4, ...).
TEST(PatternInputs, PytorchTruncatedGroupRanksStillNameThePeers) {
    TempDir dir;
    std::string prefix = "[";
    for (int k = 0; k < 30; ++k) prefix += (k ? ", " : "") + n(2 * k);
    const std::string group = "\"Process Group Name\": \"pp\", \"Process Group Ranks\": \"" + prefix +
                              ", ...]\", \"Group size\": 40, \"dtype\": \"Float\", \"In msg nelems\": 262144, "
                              "\"Out msg nelems\": 262144";
    std::ofstream(dir / "r2.json") << pytorchTrace(
        2, 80, {{us(100), us(160), kSendRecv, group + ", \"Collective name\": \"send\", \"Dst Rank\": 70"}});
    std::ofstream(dir / "r70.json") << pytorchTrace(
        70, 80, {{us(40), us(160), kSendRecv, group + ", \"Collective name\": \"recv\", \"Src Rank\": 2"}});
    const Capture c = loadCaptures({dir / "r2.json", dir / "r70.json"});
    ASSERT_EQ(c.processes.size(), 2u);
    for (const auto& p : c.processes) {
        ASSERT_EQ(p.collectives.size(), 1u) << "rank " << p.rank;
        const bool sender = p.rank == 2;
        EXPECT_EQ(p.collectives.rank[0], sender ? 1 : 35);
        EXPECT_EQ(p.collectives.root[0], sender ? 35 : 1);
        EXPECT_EQ(p.collectives.nranks[0], 40);
    }
    const Analysis a = analyze(c);
    ASSERT_EQ(a.p2p.size(), 1u);
    EXPECT_EQ(a.p2p[0].bytes, MiB);

    // Group rank lookup by hand: a prefix not evenly spaced names no rank
    // past it; a rank off the spacing or past the group size is unknown.
    using kineto::groupRankOf;
    EXPECT_EQ(groupRankOf({0, 2, 4}, true, 40, 4), 2);
    EXPECT_EQ(groupRankOf({0, 2, 4}, true, 40, 78), 39);
    EXPECT_EQ(groupRankOf({0, 2, 4}, true, 40, 80), -1);  // group rank 40 of 40
    EXPECT_EQ(groupRankOf({0, 2, 4}, true, 40, 7), -1);
    EXPECT_EQ(groupRankOf({0, 2, 5}, true, 40, 9), -1);
    EXPECT_EQ(groupRankOf({0, 2, 5}, false, 3, 9), -1);
    EXPECT_EQ(groupRankOf({}, false, 8, 5), 5);  // "[]": group ranks are global ones
    bool ok = false, cut = false;
    EXPECT_EQ(kineto::parseIntList("[3, 4, ...]", ok, &cut), (std::vector<int64_t>{3, 4}));
    EXPECT_TRUE(ok && cut);
    kineto::parseIntList("[3, 4, ...]", ok);  // split sizes: a cut list is no list
    EXPECT_FALSE(ok);
    kineto::parseIntList("[3, ..., 4]", ok, &cut);
    EXPECT_FALSE(ok);
}

TEST(PatternInputs, PytorchAllToAllSplitSizesGiveBytesPerPair) {
    // Example 8 as torch.distributed.all_to_all_single writes it: split sizes
    // in rows of 1 MiB of bf16 (524288 elements each).
    TempDir dir;
    const auto args = [](const std::string& in, int64_t inRows, const std::string& out, int64_t outRows) {
        return "\"Collective name\": \"all_to_allv\", \"Process Group Name\": \"ep\", \"Process Group Ranks\": "
               "\"[0, 1, 2]\", \"Group size\": 3, \"dtype\": \"BFloat16\", \"In split size\": \"" +
               in + "\", \"Out split size\": \"" + out + "\", \"In msg nelems\": " + n(inRows * 524288) +
               ", \"Out msg nelems\": " + n(outRows * 524288);
    };
    // Rows of 1 MiB: rank 0 sends 2 and 2, receives 2 (from 1) and 8 (from 2); and so on.
    std::ofstream(dir / "r0.json") << pytorchTrace(
        0, 3, {{us(0), us(60), kSendRecv, args("[0, 2, 2]", 4, "[0, 2, 8]", 10)}, {us(0), us(30), kGemm, ""}});
    std::ofstream(dir / "r1.json") << pytorchTrace(
        1, 3, {{us(10), us(60), kSendRecv, args("[2, 0, 2]", 4, "[2, 0, 8]", 10)}});
    std::ofstream(dir / "r2.json") << pytorchTrace(
        2, 3, {{us(20), us(100), kSendRecv, args("[8, 8, 0]", 16, "[2, 2, 0]", 4)}});
    const Analysis a = analyze(loadCaptures({dir / "r0.json", dir / "r1.json", dir / "r2.json"}));
    ASSERT_EQ(a.alltoall.size(), 1u);
    const auto& s = a.alltoall[0];
    ASSERT_EQ(s.ranks.size(), 3u);
    EXPECT_EQ(s.ranks[0].bytes, 14 * MiB);
    EXPECT_EQ(s.ranks[1].bytes, 14 * MiB);
    EXPECT_EQ(s.ranks[2].bytes, 20 * MiB);
    EXPECT_DOUBLE_EQ(*s.bytes_imbalance, 1.25);
    EXPECT_DOUBLE_EQ(*s.time_imbalance, 1.5);
    EXPECT_EQ(s.overloaded, 2);
    EXPECT_EQ(s.exposed_ns, us(160));
    for (const auto& p : s.pairs) EXPECT_EQ(p.bytes, p.src == 2 ? 8 * MiB : 2 * MiB) << p.src << "->" << p.dst;
}

TEST(PatternInputs, PytorchEvenAllToAllAndUnusableArguments) {
    // An empty split list splits evenly; a peer outside the group, a list
    // that is not one, and an unknown rank give no rows (and no crash).
    TempDir dir;
    const std::string even =
        "\"Collective name\": \"all_to_all\", \"Process Group Ranks\": \"[0, 1, 2]\", "
        "\"Group size\": 3, \"dtype\": \"Float\", \"In split size\": \"[]\", "
        "\"Out split size\": \"[]\", \"In msg nelems\": 3072, \"Out msg nelems\": 3072";
    for (int r = 0; r < 3; ++r)
        std::ofstream(dir / ("e" + n(r) + ".json"))
            << pytorchTrace(r, 3,
                            {{us(0), us(10), kSendRecv, even},
                             {us(20), us(30), kSendRecv,
                              "\"Collective name\": \"send\", \"Dst Rank\": 9, \"Group size\": 3, "
                              "\"dtype\": \"Float\", \"In msg nelems\": 4"},
                             {us(40), us(50), kSendRecv,
                              "\"Collective name\": \"all_to_allv\", \"Group size\": 3, "
                              "\"In split size\": \"[1, x]\", \"In msg nelems\": 4"},
                             // A group no job has: two rows per member would be a million rows per kernel.
                             {us(60), us(70), kSendRecv,
                              "\"Collective name\": \"all_to_all\", \"Group size\": 1000000, "
                              "\"dtype\": \"Float\", \"In split size\": \"[]\", \"In msg nelems\": 4"}});
    const Capture c = loadCaptures({dir / "e0.json", dir / "e1.json", dir / "e2.json"});
    for (const auto& p : c.processes) EXPECT_EQ(p.collectives.size(), 4u);  // the even all-to-all's rows only
    const Analysis a = analyze(c);
    ASSERT_EQ(a.alltoall.size(), 1u);
    for (const auto& r : a.alltoall[0].ranks)
        EXPECT_EQ(r.bytes, 4u * 1024 * 4) << r.device;  // 1024 floats to and from each of 2 peers
    EXPECT_DOUBLE_EQ(*a.alltoall[0].bytes_imbalance, 1.0);
    EXPECT_EQ(a.alltoall[0].pairs.size(), 6u);
}

}  // namespace
}  // namespace osc

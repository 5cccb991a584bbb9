// Issue 28 item 4: NCCL's NVTX payloads in Nsight Systems exports give
// bytes, communicators, peers and ranks without our plugin. The files are
// built here from NCCL's documented schemas (nccl_payload_writer.h), with the
// payload in each way nsys exports it. Expected values are the scenario's own
// numbers, worked out by hand below.
#include "analyzer/capture/nccl_nvtx_payload.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/crossrank/analyze.h"
#include "tests/analyzer/nccl_payload_writer.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace osc {
namespace {

using testing_io::execSql;
using testsupport::TempDir;

using namespace test::ncclpayload;

constexpr uint64_t kComm = 0xC0FFEE0012345678ull;

class ExportBuilder {
public:
    ExportBuilder(Nccl nccl, Encoding encoding) : nccl_(nccl), encoding_(encoding) {
        sql_ = R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, correlationId INTEGER,
  nameId INTEGER, returnValue INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData BLOB);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),
  (3, 'ncclDevKernel_SendRecv'), (4, 'gemm'), (10, 'NCCL'), (11, 'ncclCommInitRankConfig'),
  (12, 'ncclCommInitRank'), (13, 'ncclAllReduce'), (14, 'ncclSend'), (15, 'ncclRecv'), (16, 'ncclGroupStart'),
  (17, 'ncclGroupEnd');
)";
        sql_ += schemaTablesSql() + schemaRowsSql(nccl);
    }

    void process(int pid) {
        sql_ +=
            "INSERT INTO PROCESSES VALUES (" + std::to_string(gpid(pid)) + ", " + std::to_string(pid) + ", 'python');";
        sql_ += "INSERT INTO NVTX_EVENTS (start, eventType, globalTid, domainId, text) VALUES (0, 75, " +
                std::to_string(tid(pid)) + ", " + std::to_string(kDomain) + ", 'NCCL');";
    }
    // An NCCL range on the process's main thread; `fields` in schema order.
    void range(int pid, int textId, int64_t start, int64_t end, uint64_t sid, const std::vector<uint64_t>& fields) {
        const Literals payload = payloadLiterals(nccl_, encoding_, sid, fields);
        sql_ +=
            "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId, jsonText, binaryData) "
            "VALUES (" +
            std::to_string(start) + ", " + std::to_string(end) + ", 59, " + std::to_string(tid(pid)) + ", " +
            std::to_string(textId) + ", " + std::to_string(kDomain) + ", " + payload.json + ", " + payload.binary +
            ");";
    }
    // A launch at `at` on the main thread of a kernel [start, end) on `device`.
    void kernel(int pid, int64_t at, uint32_t correlation, int nameId, int device, int64_t start, int64_t end,
                int stream) {
        sql_ += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(at) + ", " +
                std::to_string(at + 5) + ", " + std::to_string(tid(pid)) + ", " + std::to_string(correlation) +
                ", 1, 0);";
        sql_ += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(start) + ", " + std::to_string(end) +
                ", " + std::to_string(device) + ", " + std::to_string(stream) + ", " + std::to_string(correlation) +
                ", " + std::to_string(gpid(pid)) + ", " + std::to_string(nameId) + ", " + std::to_string(nameId) + ");";
    }
    void write(const std::string& path) const { execSql(path, "BEGIN;" + sql_ + "COMMIT;"); }

    static uint64_t gpid(int pid) { return static_cast<uint64_t>(pid) << 24; }
    static uint64_t tid(int pid) { return gpid(pid) | 1; }

private:
    Nccl nccl_;
    Encoding encoding_;
    std::string sql_;
};

constexpr uint64_t kAllReduceBytes = 8 << 20, kSendBytes = 1 << 20;

// Two ranks, each on its own GPU (rank r is pid 100 + r on GPU r):
// - an AllReduce of 8 MiB: range [1000, 1100), launched at 1050, kernel
//   [2000, 3000) on both ranks;
// - in one group, a 1 MiB send to and a 1 MiB receive from the other rank:
//   ranges [4020, 4030) and [4040, 4050), launched inside ncclGroupEnd
//   [4060, 4100) at 4070, one SendRecv kernel: rank 0 [5000, 6000), rank 1
//   [5200, 6000).
void writeTwoRanks(const std::string& path, Nccl nccl, Encoding encoding) {
    ExportBuilder b(nccl, encoding);
    for (int r = 0; r < 2; ++r) {
        const int pid = 100 + r;
        b.process(pid);
        const uint64_t peer = static_cast<uint64_t>(1 - r);
        if (nccl == Nccl::V2_25) {
            b.range(pid, 11, 100, 200, 11, {kComm, 2, static_cast<uint64_t>(r), static_cast<uint64_t>(r)});
            b.range(pid, 13, 1000, 1100, 5, {kComm, kAllReduceBytes, 0});
            b.range(pid, 14, 4020, 4030, 9, {kComm, kSendBytes, peer});
            b.range(pid, 15, 4040, 4050, 10, {kComm, kSendBytes, peer});
        } else {
            b.range(pid, 12, 100, 200, 0, {static_cast<uint64_t>(r), 2, static_cast<uint64_t>(r)});
            b.range(pid, 13, 1000, 1100, 5, {kAllReduceBytes, 0});
            b.range(pid, 14, 4020, 4030, 9, {kSendBytes, peer});
            b.range(pid, 15, 4040, 4050, 10, {kSendBytes, peer});
        }
        b.range(pid, 16, 4000, 4010, kNone, {});
        b.range(pid, 17, 4060, 4100, kNone, {});
        b.kernel(pid, 1050, 1, 2, r, 2000, 3000, 13);
        b.kernel(pid, 4070, 2, 3, r, r == 0 ? 5000 : 5200, 6000, 13);
    }
    b.write(path);
}

struct Case {
    Nccl nccl;
    Encoding encoding;
};

class NcclPayloads : public ::testing::TestWithParam<Case> {};

TEST_P(NcclPayloads, BytesPeersAndWaitingWithoutThePlugin) {
    TempDir dir;
    const auto path = dir / "nccl.sqlite";
    writeTwoRanks(path, GetParam().nccl, GetParam().encoding);
    Capture c;
    readSqliteCapture(path, {}, c);
    c.finalize();
    ASSERT_EQ(c.processes.size(), 2u);
    const Analysis a = analyze(c, {});
    ASSERT_EQ(a.devices.size(), 2u);
    const bool named = GetParam().nccl == Nccl::V2_25;
    for (size_t d = 0; d < 2; ++d) {
        const DeviceAnalysis& dev = a.devices[d];
        ASSERT_EQ(dev.collectives.size(), 2u) << d;
        const CollectiveInstance& ar = dev.collectives[0];
        EXPECT_EQ(ar.collective, "AllReduce");
        EXPECT_EQ(ar.bytes, kAllReduceBytes);
        ASSERT_TRUE(ar.bandwidth_gbps);
        EXPECT_DOUBLE_EQ(*ar.bandwidth_gbps, 8388608.0 / 1000.0);
        EXPECT_EQ(ar.commHash, named ? kComm : 0u);
        EXPECT_EQ(ar.commRank, static_cast<int>(d));
        EXPECT_EQ(ar.commSize, 2);
        // Bus bandwidth from the payload's bytes and the communicator's size
        // (docs/metrics.md 7g): both ranks arrive at 2000, so the transfer is
        // the whole kernel, 1000 ns; AllReduce's factor on 2 ranks is
        // 2(2-1)/2 = 1. The export names no GPU model: no peak, no fraction.
        ASSERT_TRUE(ar.algbw_gbps) << d;
        EXPECT_DOUBLE_EQ(*ar.algbw_gbps, 8388608.0 / 1000.0);
        ASSERT_TRUE(ar.busbw_gbps) << d;
        EXPECT_DOUBLE_EQ(*ar.busbw_gbps, 8388608.0 / 1000.0 * 2.0 * (2 - 1) / 2);
        EXPECT_EQ(ar.busbw_basis, BusBwBasis::Transfer);
        EXPECT_FALSE(ar.busbw_fraction);
        const CollectiveInstance& sr = dev.collectives[1];
        EXPECT_EQ(sr.collective, "SendRecv");
        EXPECT_EQ(sr.bytes, 2 * kSendBytes);
        ASSERT_EQ(sr.p2p.size(), 2u);
        EXPECT_TRUE(sr.p2p[0].send);
        EXPECT_FALSE(sr.p2p[1].send);
        EXPECT_EQ(sr.p2p[0].peer, static_cast<int32_t>(1 - d));
        EXPECT_EQ(sr.p2p[0].bytes, kSendBytes);
    }
    // The AllReduce is matched on both ranks; the sends pair with the receives.
    ASSERT_EQ(a.matched.size(), 1u);
    EXPECT_EQ(a.matched[0].collective, "AllReduce");
    EXPECT_EQ(a.p2p.size(), 2u);
    // Rank 0's SendRecv waits for rank 1's from 5000 to 5200 (nothing computes).
    ASSERT_TRUE(a.devices[0].wait);
    EXPECT_TRUE(a.devices[0].wait->known());
    EXPECT_EQ(a.devices[0].wait->comm_wait_ns, 200);
    EXPECT_EQ(a.devices[0].wait->exposed_wait_ns, 200);
    EXPECT_EQ(a.devices[1].wait->comm_wait_ns, 0);
}

INSTANTIATE_TEST_SUITE_P(Layouts, NcclPayloads,
                         ::testing::Values(Case{Nccl::V2_25, Encoding::HeaderedBlob},
                                           Case{Nccl::V2_25, Encoding::BareBlob}, Case{Nccl::V2_25, Encoding::Json},
                                           Case{Nccl::V2_16, Encoding::HeaderedBlob},
                                           Case{Nccl::V2_16, Encoding::BareBlob}),
                         [](const auto& param) {
                             return std::string(param.param.nccl == Nccl::V2_25 ? "Nccl2_25" : "Nccl2_16") +
                                    (param.param.encoding == Encoding::Json       ? "Json"
                                     : param.param.encoding == Encoding::BareBlob ? "BareBlob"
                                                                                  : "HeaderedBlob");
                         });

// Without payloads the same export has no sizes: the rows come from the payloads alone.
TEST(NcclPayloads, WithoutPayloadsNothingIsKnown) {
    TempDir dir;
    const auto path = dir / "plain.sqlite";
    writeTwoRanks(path, Nccl::V2_25, Encoding::HeaderedBlob);
    execSql(path, "UPDATE NVTX_EVENTS SET binaryData = NULL;");
    Capture c;
    readSqliteCapture(path, {}, c);
    for (const Process& p : c.processes) EXPECT_EQ(p.collectives.size(), 0u);
}

TEST(NcclPayloadDecoding, SignedRanksAndHexCommunicatorsInJson) {
    const auto v = ncclnvtx::decodeJson(R"({"payload": {"NCCL communicator ID": "0xff", "Peer rank": -1,
                                            "Message size [bytes]": "4096"}})");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->comm, 255u);
    EXPECT_EQ(v->peer, -1);
    EXPECT_EQ(v->bytes, 4096u);
    EXPECT_FALSE(ncclnvtx::decodeJson("not json"));
    EXPECT_FALSE(ncclnvtx::decodeJson(R"({"unrelated": 1})"));
}

TEST(NcclPayloadDecoding, CallNames) {
    EXPECT_EQ(ncclnvtx::collectiveOf("ncclAllReduce"), "AllReduce");
    EXPECT_EQ(ncclnvtx::collectiveOf("ncclAlltoAll"), "AllToAll");
    EXPECT_EQ(ncclnvtx::collectiveOf("ncclGroupEnd"), "");
    EXPECT_TRUE(ncclnvtx::createsCommunicator("ncclCommInitRankScalable"));
    EXPECT_FALSE(ncclnvtx::createsCommunicator("ncclCommDestroy"));
    EXPECT_EQ(ncclnvtx::staticSchemaId("ncclRecv"), kStatic + 10);
}

}  // namespace
}  // namespace osc

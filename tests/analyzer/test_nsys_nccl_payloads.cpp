// Issue 28 item 4: NCCL's NVTX payloads in Nsight Systems exports give
// bytes, communicators, peers and ranks without our plugin. The files are
// built here from NCCL's documented schemas (src/include/
// nvtx_payload_schemas.h since NCCL 2.25; collectives.cc and init.cc in
// 2.16-2.24), with the payload as nsys exports it: bytes after a 32-byte
// header, bare bytes, or JSON. Expected values are the scenario's own
// numbers, worked out by hand below.
#include "analyzer/capture/nccl_nvtx_payload.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/crossrank/analyze.h"
#include "tests/analyzer/test_capture_io_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace osc {
namespace {

using testing_io::execSql;
using testsupport::TempDir;

constexpr uint64_t kStatic = uint64_t{1} << 24;  // NVTX_PAYLOAD_ENTRY_TYPE_SCHEMA_ID_STATIC_START
constexpr int kDomain = 7;
constexpr uint64_t kComm = 0xC0FFEE0012345678ull;

enum class Nccl { V2_25, V2_16 };                      // schema layouts
enum class Encoding { HeaderedBlob, BareBlob, Json };  // how nsys holds the payload

std::string le(uint64_t v, int bytes) {
    std::string out;
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
    return out;
}

std::string hexLiteral(const std::string& bytes) {
    std::string out = "X'";
    char buf[3];
    for (unsigned char c : bytes) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        out += buf;
    }
    return out + "'";
}

struct Entry {
    const char* name;
    uint64_t type;
    int offset;  // -1: NULL in the table
};

struct SchemaDef {
    uint64_t sid;  // NVTX_SID_* of NCCL's nvtx.h
    int size;
    std::vector<Entry> entries;
};

// NCCL >= 2.25 (nvtx_payload_schemas.h): the communicator first.
const std::vector<SchemaDef> kSchemas225 = {
    {11, 24, {{"NCCL communicator ID", 18, -1}, {"No. of ranks", 5, 8}, {"Rank", 5, 12}, {"CUDA device", 5, 16}}},
    {5,
     24,
     {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}, {"Reduction operation", kStatic + 24, 16}}},
    {9, 24, {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}, {"Peer rank", 5, 16}}},
    {10, 24, {{"NCCL communicator ID", 18, -1}, {"Message size [bytes]", 22, 8}, {"Peer rank", 5, 16}}},
};
// NCCL 2.16-2.24 (collectives.cc, init.cc): no communicator.
const std::vector<SchemaDef> kSchemas216 = {
    {0, 12, {{"Rank", 5, 0}, {"No. of ranks", 5, 4}, {"CUDA device", 5, 8}}},
    {5, 16, {{"Message size [bytes]", 22, 0}, {"Reduction operation", kStatic + 11, 8}}},
    {9, 16, {{"Message size [bytes]", 22, 0}, {"Peer rank", 5, 8}}},
    {10, 16, {{"Message size [bytes]", 22, 0}, {"Peer rank", 5, 8}}},
};

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
CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT, type INTEGER, flags INTEGER,
  numEntries INTEGER, payloadSize INTEGER, alignTo INTEGER);
CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId INTEGER NOT NULL, schemaId INTEGER NOT NULL, idx INTEGER NOT NULL,
  flags INTEGER, type INTEGER, name TEXT, description TEXT, arrayOrUnionDetail INTEGER, offset INTEGER);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),
  (3, 'ncclDevKernel_SendRecv'), (4, 'gemm'), (10, 'NCCL'), (11, 'ncclCommInitRankConfig'),
  (12, 'ncclCommInitRank'), (13, 'ncclAllReduce'), (14, 'ncclSend'), (15, 'ncclRecv'), (16, 'ncclGroupStart'),
  (17, 'ncclGroupEnd');
)";
        for (const auto& s : nccl == Nccl::V2_25 ? kSchemas225 : kSchemas216) {
            sql_ += "INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (" + std::to_string(kDomain) + ", " +
                    std::to_string(kStatic + s.sid) + ", NULL, 1, 0, " + std::to_string(s.entries.size()) + ", " +
                    std::to_string(s.size) + ", NULL);";
            for (size_t i = 0; i < s.entries.size(); ++i) {
                const Entry& e = s.entries[i];
                sql_ += "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (" + std::to_string(kDomain) + ", " +
                        std::to_string(kStatic + s.sid) + ", " + std::to_string(i) + ", 0, " + std::to_string(e.type) +
                        ", '" + e.name + "', NULL, 0, " + (e.offset < 0 ? "NULL" : std::to_string(e.offset)) + ");";
            }
        }
    }

    void process(int pid) {
        sql_ +=
            "INSERT INTO PROCESSES VALUES (" + std::to_string(gpid(pid)) + ", " + std::to_string(pid) + ", 'python');";
        sql_ += "INSERT INTO NVTX_EVENTS (start, eventType, globalTid, domainId, text) VALUES (0, 75, " +
                std::to_string(tid(pid)) + ", " + std::to_string(kDomain) + ", 'NCCL');";
    }
    // An NCCL range on the process's main thread; `fields` in schema order.
    void range(int pid, int textId, int64_t start, int64_t end, uint64_t sid, const std::vector<uint64_t>& fields) {
        std::string payload = "NULL", json = "NULL";
        if (sid != ~uint64_t{0}) {
            const SchemaDef& s = schemaOf(sid);
            std::string bytes(static_cast<size_t>(s.size), '\0');
            std::string doc = "{";
            for (size_t i = 0; i < fields.size(); ++i) {
                const Entry& e = s.entries[i];
                const int width = e.type == 18 || e.type == 22 ? 8 : 4;
                bytes.replace(static_cast<size_t>(e.offset < 0 ? 0 : e.offset), static_cast<size_t>(width),
                              le(fields[i], width));
                // JSON as a tool would write it: the communicator as hex text.
                doc += std::string(i ? ", " : "") + "\"" + e.name + "\": ";
                if (e.type == 18) {
                    char hex[24];
                    std::snprintf(hex, sizeof hex, "\"0x%016llx\"", static_cast<unsigned long long>(fields[i]));
                    doc += hex;
                } else {
                    doc += std::to_string(static_cast<int64_t>(fields[i]));
                }
            }
            doc += "}";
            if (encoding_ == Encoding::Json)
                json = "'" + doc + "'";
            else if (encoding_ == Encoding::BareBlob)
                payload = hexLiteral(bytes);
            else
                payload = hexLiteral(le(kDomain, 8) + le(kStatic + sid, 8) + le(bytes.size(), 8) + le(32, 8) + bytes);
        }
        sql_ +=
            "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId, jsonText, binaryData) "
            "VALUES (" +
            std::to_string(start) + ", " + std::to_string(end) + ", 59, " + std::to_string(tid(pid)) + ", " +
            std::to_string(textId) + ", " + std::to_string(kDomain) + ", " + json + ", " + payload + ");";
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
    const SchemaDef& schemaOf(uint64_t sid) const {
        for (const auto& s : nccl_ == Nccl::V2_25 ? kSchemas225 : kSchemas216)
            if (s.sid == sid) return s;
        ADD_FAILURE() << "no schema " << sid;
        return kSchemas225.front();
    }
    Nccl nccl_;
    Encoding encoding_;
    std::string sql_;
};

constexpr uint64_t kNoPayload = ~uint64_t{0};
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
        b.range(pid, 16, 4000, 4010, kNoPayload, {});
        b.range(pid, 17, 4060, 4100, kNoPayload, {});
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

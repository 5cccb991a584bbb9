// PyTorch 2.11's sends and receives, whose peers are on the record_param_comms
// operators only: a batch (batch_isend_irecv, torch.distributed.pipelining)
// issues its operators, which launch nothing, then one nccl:coalesced range
// launches the fused SendRecv kernel. Each test writes a trace whose every
// number it knows and checks the Send/Recv rows the reader makes of it
// (docs/formats.md) and, for a two-rank job, the transfers matched from them.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "tests/analyzer/pytorch_seq_trace.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace osc {
namespace {

using test::RankTrace;

// A send or receive of `nelems` floats on the world group of two ranks.
test::Coll p2p(const std::string& name, int64_t nelems = 1024) {
    return test::call({"0", "[0, 1]", 2}, 0, name, nelems);
}

// PyTorch 2.11: arguments on operators only, no Seq.
RankTrace rank(int r) { return RankTrace(r, 2, test::ArgsOn::Operator, false); }

constexpr const char* kSendRecv = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

struct Row {
    std::string func;
    int peer;
    uint64_t bytes;
    TimeNs start;
    bool operator==(const Row&) const = default;
};

void PrintTo(const Row& r, std::ostream* os) {
    *os << r.func << " peer " << r.peer << " " << r.bytes << " B at +" << r.start;
}

// The process's Send/Recv rows, start times as offsets from its first kernel's.
std::vector<Row> rowsOf(const Capture& c, size_t process = 0) {
    const Process& p = c.processes.at(process);
    const TimeNs first = p.devices.at(0).kernels.start.at(0);
    std::vector<Row> out;
    for (size_t r = 0; r < p.collectives.size(); ++r)
        out.push_back({std::string(c.strings.at(p.collectives.func[r])), p.collectives.root[r], p.collectives.bytes[r],
                       p.collectives.gpuStart[r] - first});
    return out;
}

// Rank 0 sends 1024 floats to rank 1 and receives 2048 from it in one batch;
// rank 1 the mirror. Kernels (ns): rank 0 [10000, 13000), rank 1 [10400, 13000).
std::vector<std::string> writeBatchedPair(const std::string& dir) {
    RankTrace r0 = rank(0), r1 = rank(1);
    r0.addPointToPoint(p2p("send"), 1, 1000);
    r0.addPointToPoint(p2p("recv", 2048), 1, 1200);
    r0.addLaunch(kSendRecv, 1500, 10000, 3000);
    r1.addPointToPoint(p2p("recv"), 0, 1000);
    r1.addPointToPoint(p2p("send", 2048), 0, 1200);
    r1.addLaunch(kSendRecv, 1500, 10400, 2600);
    return {r0.write(dir), r1.write(dir)};
}

TEST(KinetoP2pOperators, ABatchsOperatorsGoWithTheFusedKernelLaunchedAfterThem) {
    testsupport::TempDir dir;
    const auto paths = writeBatchedPair(dir.path());
    const Capture c0 = loadCaptures({paths[0]});
    EXPECT_EQ(rowsOf(c0), (std::vector<Row>{{"Send", 1, 4096, 0}, {"Recv", 1, 8192, 0}}));

    const Analysis a = analyze(loadCaptures(paths), {});
    ASSERT_EQ(a.p2p.size(), 2u);
    uint64_t bytes = 0;
    for (const P2pTransfer& t : a.p2p) {
        EXPECT_NE(t.sender.first, t.receiver.first);
        bytes += t.bytes;
    }
    EXPECT_EQ(bytes, 4096u + 8192u);
}

// An operator launching its own kernel (a single dist.send) has it inside.
TEST(KinetoP2pOperators, AnOperatorLaunchingItsKernelHasIt) {
    testsupport::TempDir dir;
    RankTrace r0 = rank(0);
    r0.addPointToPoint(p2p("send"), 1, 1000);
    r0.addLaunch(kSendRecv, 1050, 5000, 100);
    r0.addPointToPoint(p2p("recv"), 1, 2000);
    r0.addLaunch(kSendRecv, 2050, 6000, 100);
    EXPECT_EQ(rowsOf(loadCaptures({r0.write(dir.path())})),
              (std::vector<Row>{{"Send", 1, 4096, 0}, {"Recv", 1, 4096, 1000}}));
}

// The first NCCL kernel after an operator is an all-reduce: the operator is
// left unjoined, not lent to the next batch's kernel, whose own operator it
// would double. Compute kernels launched in between are passed over.
TEST(KinetoP2pOperators, AnOperatorFollowedByAnotherCollectiveStaysUnjoined) {
    testsupport::TempDir dir;
    RankTrace r0 = rank(0);
    r0.addLaunch("ampere_sgemm_128x64_nn", 500, 4000, 100);
    r0.addPointToPoint(p2p("send"), 1, 1000);
    r0.addLaunch("ampere_sgemm_128x64_nn", 1150, 4500, 100);
    r0.addLaunch(kAllReduce, 1200, 5000, 100);
    r0.addPointToPoint(p2p("recv", 512), 1, 2000);
    r0.addLaunch(kSendRecv, 2200, 6000, 100);
    EXPECT_EQ(rowsOf(loadCaptures({r0.write(dir.path())})), (std::vector<Row>{{"Recv", 1, 2048, 2000}}));
}

// Operators on another thread, or nested in one of the same call, add nothing.
TEST(KinetoP2pOperators, OnlyTheOperatorsThreadCountsAndANestedRecordIsTheSameCall) {
    testsupport::TempDir dir;
    RankTrace r0 = rank(0);
    r0.addPointToPoint(p2p("send"), 1, 1000);
    r0.addPointToPoint(p2p("send"), 1, 1010, 50);  // nested in [1000, 1100): an nccl:* record of the same call
    r0.addPointToPoint(p2p("recv"), 1, 1200, 100, 2);
    r0.addLaunch(kSendRecv, 1500, 5000, 100);
    EXPECT_EQ(rowsOf(loadCaptures({r0.write(dir.path())})), (std::vector<Row>{{"Send", 1, 4096, 0}}));
}

// Older PyTorch put the arguments on the kernel too: one set of rows, not two.
TEST(KinetoP2pOperators, AKernelWithItsOwnArgumentsIsNotDescribedTwice) {
    testsupport::TempDir dir;
    RankTrace r0 = rank(0);
    r0.addPointToPoint(p2p("send"), 1, 1000);
    r0.addLaunch(kSendRecv, 1050, 5000, 100, 1,
                 {{"Collective name", "send"},
                  {"In msg nelems", 1024},
                  {"dtype", "Float"},
                  {"Group size", 2},
                  {"Process Group Name", "0"},
                  {"Process Group Ranks", "[0, 1]"},
                  {"Dst Rank", 1}});
    EXPECT_EQ(rowsOf(loadCaptures({r0.write(dir.path())})), (std::vector<Row>{{"Send", 1, 4096, 0}}));
}

}  // namespace
}  // namespace osc

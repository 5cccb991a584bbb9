// docs/metrics.md Examples 6-8, worked by hand there: point-to-point pairs
// in the waiting/transfer split, the pipeline bubble, and all-to-all balance.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/analysis.h"
#include "test_metrics_support.h"

#include <gtest/gtest.h>

namespace osc {
namespace {

using testing::TraceBuilder;

constexpr TimeNs us(TimeNs v) { return v * 1000; }
constexpr uint64_t MiB = 1 << 20;
constexpr uint64_t kComm = 0xc0ffee;
const std::string kGemm = "ampere_bf16_s16816gemm_256x128";
const std::string kSendRecv = "void ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";

bool has(const std::vector<Finding>& f, FindingKind k) {
    for (const auto& x : f)
        if (x.kind == k) return true;
    return false;
}

// A SendRecv kernel with one row per (send?, peer, bytes) at the kernel's own GPU times.
void sendRecv(TraceBuilder& b, int rank, TimeNs start, TimeNs end, uint32_t stream, int nranks,
              std::vector<std::tuple<bool, int, uint64_t>> parts) {
    b.kernel(rank, 0, kSendRecv, start, end, stream);
    for (const auto& [send, peer, bytes] : parts)
        b.p2pRow(rank, 0, kComm, send ? "Send" : "Recv", peer, nranks, bytes, start, end);
}

TEST(PatternExample, Example6SendAndReceive) {
    TraceBuilder b;
    b.kernel(0, 0, kGemm, us(0), us(100), 7);
    sendRecv(b, 0, us(100), us(160), 13, 2, {{true, 1, MiB}});
    b.kernel(0, 0, kGemm, us(120), us(220), 8);
    sendRecv(b, 0, us(300), us(310), 14, 2, {{false, 1, 64 * 1024}});
    sendRecv(b, 1, us(40), us(160), 14, 2, {{false, 0, MiB}});
    b.kernel(1, 0, kGemm, us(160), us(260), 7);
    sendRecv(b, 1, us(270), us(280), 13, 2, {{true, 0, 64 * 1024}});
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.devices.size(), 2u);
    ASSERT_EQ(a.p2p.size(), 2u);
    EXPECT_EQ(a.p2p[0].sender.first, 0);
    EXPECT_EQ(a.p2p[0].receiver.first, 1);
    EXPECT_EQ(a.p2p[0].bytes, MiB);
    EXPECT_EQ(a.p2p[1].sender.first, 1);
    EXPECT_EQ(a.p2p[1].bytes, 64u * 1024);
    EXPECT_TRUE(a.matched.empty());  // sends and receives are not matched by order

    const auto& r0 = a.devices[0];
    EXPECT_EQ(r0.totals.comm_ns, us(70));
    EXPECT_EQ(r0.totals.exposed_comm_ns, us(30));
    EXPECT_EQ(r0.wait->comm_wait_ns, 0);
    EXPECT_EQ(r0.wait->exposed_transfer_ns, us(30));
    EXPECT_EQ(r0.last_arrivals, 1);
    EXPECT_EQ(r0.delay_caused_ns, us(60));

    const auto& r1 = a.devices[1];
    EXPECT_EQ(r1.totals.comm_ns, us(130));
    EXPECT_EQ(r1.totals.exposed_comm_ns, us(130));
    EXPECT_EQ(r1.wait->comm_wait_ns, us(60));
    EXPECT_EQ(r1.wait->exposed_wait_ns, us(60));
    EXPECT_EQ(r1.wait->exposed_transfer_ns, us(70));
    EXPECT_EQ(r1.last_arrivals, 0);
    EXPECT_EQ(r1.delay_caused_ns, 0);
    for (const auto& w : a.warnings) EXPECT_EQ(w.find("SendRecv"), std::string::npos) << w;
}

// One compute kernel launched inside an NVTX range `name` on `rank`.
void microbatch(TraceBuilder& b, int rank, const std::string& name, TimeNs start, TimeNs end) {
    static TimeNs cpu = 0;
    cpu += 10;
    b.range(rank, name, cpu, cpu + 5);
    b.launched(rank, 0, kGemm, cpu + 1, start, end);
}

TEST(PatternExample, Example7BalancedPipeline) {
    TraceBuilder b;
    microbatch(b, 0, "fwd mb 0", us(0), us(10));
    microbatch(b, 0, "fwd mb 1", us(10), us(20));
    microbatch(b, 0, "bwd mb 0", us(40), us(60));
    microbatch(b, 0, "bwd mb 1", us(70), us(90));
    microbatch(b, 1, "fwd mb 0", us(10), us(20));
    microbatch(b, 1, "bwd mb 0", us(20), us(40));
    microbatch(b, 1, "fwd mb 1", us(40), us(50));
    microbatch(b, 1, "bwd mb 1", us(50), us(70));
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.pipeline.size(), 1u);
    const auto& p = a.pipeline[0];
    EXPECT_EQ(p.step, "");
    EXPECT_EQ(p.stages, 2);
    EXPECT_EQ(p.microbatches, 2);
    EXPECT_EQ(p.start_ns, 0);
    EXPECT_EQ(p.end_ns, us(90));
    EXPECT_DOUBLE_EQ(*p.theoretical_bubble_share, 1.0 / 3.0);
    const auto& s0 = *a.devices[0].pipeline;
    const auto& s1 = *a.devices[1].pipeline;
    EXPECT_EQ(s0.compute_ns, us(60));
    EXPECT_EQ(s0.bubble_ns, us(30));
    EXPECT_EQ(s0.fill_ns, 0);
    EXPECT_EQ(s0.drain_ns, 0);
    EXPECT_EQ(s0.stall_ns, us(30));
    EXPECT_EQ(s1.compute_ns, us(60));
    EXPECT_EQ(s1.bubble_ns, us(30));
    EXPECT_EQ(s1.fill_ns, us(10));
    EXPECT_EQ(s1.drain_ns, us(20));
    EXPECT_EQ(s1.stall_ns, 0);
    EXPECT_DOUBLE_EQ(*s0.bubble_share, 1.0 / 3.0);
    EXPECT_DOUBLE_EQ(*s1.bubble_share, 1.0 / 3.0);
    for (const auto& d : a.devices) EXPECT_FALSE(has(d.findings, FindingKind::PipelineBubble));
}

TEST(PatternExample, Example7SlowSecondStage) {
    TraceBuilder b;
    microbatch(b, 0, "fwd mb 0", us(0), us(10));
    microbatch(b, 0, "fwd mb 1", us(10), us(20));
    microbatch(b, 0, "bwd mb 0", us(55), us(75));
    microbatch(b, 0, "bwd mb 1", us(100), us(120));
    microbatch(b, 1, "fwd mb 0", us(10), us(25));
    microbatch(b, 1, "bwd mb 0", us(25), us(55));
    microbatch(b, 1, "fwd mb 1", us(55), us(70));
    microbatch(b, 1, "bwd mb 1", us(70), us(100));
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.pipeline.size(), 1u);
    EXPECT_EQ(a.pipeline[0].end_ns - a.pipeline[0].start_ns, us(120));
    EXPECT_EQ(a.pipeline[0].slowest, 1);
    const auto& s0 = *a.devices[0].pipeline;
    const auto& s1 = *a.devices[1].pipeline;
    EXPECT_EQ(s1.compute_ns, us(90));
    EXPECT_EQ(s1.bubble_ns, us(30));
    EXPECT_DOUBLE_EQ(*s1.bubble_share, 0.25);
    EXPECT_EQ(s0.bubble_ns, us(60));
    EXPECT_EQ(s0.stall_ns, us(60));
    EXPECT_DOUBLE_EQ(*s0.bubble_share, 0.5);
    // Outside any step range, the findings are the device's.
    ASSERT_TRUE(has(a.devices[0].findings, FindingKind::PipelineBubble));
    EXPECT_FALSE(has(a.devices[1].findings, FindingKind::PipelineBubble));
    for (const auto& f : a.devices[0].findings)
        if (f.kind == FindingKind::PipelineBubble) {
            EXPECT_EQ(f.exposed_ns, us(20));
            EXPECT_NE(f.message.find("slowest stage is rank 1 gpu 0"), std::string::npos) << f.message;
        }
}

TEST(PatternExample, Example8GroupedAllToAll) {
    TraceBuilder b;
    const auto exchange = [&](int rank, TimeNs start, TimeNs end, uint64_t toA, uint64_t toB) {
        const int a = (rank + 1) % 3, c = (rank + 2) % 3;
        // What each rank receives mirrors the others' sends (the table of Example 8).
        const uint64_t sent[3][3] = {{0, 2 * MiB, 2 * MiB}, {2 * MiB, 0, 2 * MiB}, {8 * MiB, 8 * MiB, 0}};
        sendRecv(b, rank, start, end, 13, 3,
                 {{true, a, toA}, {true, c, toB}, {false, a, sent[a][rank]}, {false, c, sent[c][rank]}});
    };
    exchange(0, us(0), us(60), 2 * MiB, 2 * MiB);
    exchange(1, us(10), us(60), 2 * MiB, 2 * MiB);
    exchange(2, us(20), us(100), 8 * MiB, 8 * MiB);
    b.kernel(0, 0, kGemm, us(0), us(30), 7);
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.alltoall.size(), 1u);
    const auto& s = a.alltoall[0];
    EXPECT_EQ(s.step, "");
    EXPECT_EQ(s.dispatches, 1);
    ASSERT_EQ(s.ranks.size(), 3u);
    const uint64_t bytes[] = {14 * MiB, 14 * MiB, 20 * MiB};
    const TimeNs time[] = {us(40), us(40), us(80)}, exposed[] = {us(30), us(50), us(80)};
    for (size_t r = 0; r < 3; ++r) {
        EXPECT_EQ(s.ranks[r].device, static_cast<int>(r));
        EXPECT_EQ(s.ranks[r].bytes, bytes[r]);
        EXPECT_EQ(s.ranks[r].time_ns, time[r]);
        EXPECT_EQ(s.ranks[r].exposed_ns, exposed[r]);
    }
    EXPECT_DOUBLE_EQ(*s.bytes_imbalance, 1.25);
    EXPECT_DOUBLE_EQ(*s.time_imbalance, 1.5);
    EXPECT_EQ(s.overloaded, 2);
    EXPECT_EQ(s.exposed_ns, us(160));
    EXPECT_EQ(s.pairs.size(), 6u);
    EXPECT_TRUE(has(a.devices[2].findings, FindingKind::AllToAllImbalance));
    EXPECT_FALSE(has(a.devices[0].findings, FindingKind::AllToAllImbalance));
    ASSERT_EQ(a.matched.size(), 1u);
    EXPECT_TRUE(a.matched[0].pointToPoint);
    EXPECT_EQ(a.matched[0].skew_ns, us(20));
    EXPECT_EQ(a.devices[0].wait->comm_wait_ns, us(20));
    EXPECT_EQ(a.devices[0].wait->exposed_wait_ns, 0);
    EXPECT_EQ(a.devices[1].wait->exposed_wait_ns, us(10));
    EXPECT_EQ(a.devices[2].last_arrivals, 1);
    EXPECT_EQ(a.devices[2].delay_caused_ns, us(10));
    EXPECT_EQ(a.devices[0].alltoall->bytes_sent, 4 * MiB);
    EXPECT_EQ(a.devices[0].alltoall->bytes_received, 10 * MiB);
}

}  // namespace
}  // namespace osc

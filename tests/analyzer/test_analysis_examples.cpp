// Hand-worked examples (the same ones docs/metrics.md works through), and
// constructed traces for the findings, plugin matching and multi-rank views.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/coverage.h"
#include "test_metrics_support.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace osc {
namespace {

using testing::TraceBuilder;

constexpr TimeNs us(TimeNs v) { return v * 1000; }
const std::string kGemm = "ampere_bf16_s16816gemm_256x128";
const std::string kAllReduce = "void ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs4K)";

bool has(const std::vector<Finding>& f, FindingKind k) {
    return std::any_of(f.begin(), f.end(), [&](const Finding& x) { return x.kind == k; });
}
const Finding* find(const std::vector<Finding>& f, FindingKind k) {
    for (const auto& x : f)
        if (x.kind == k) return &x;
    return nullptr;
}

// docs/metrics.md, Example 1.
TEST(AnalysisExample, OneDeviceOverlap) {
    TraceBuilder b;
    b.kernel(0, 0, kGemm, us(0), us(100), 7);
    b.kernel(0, 0, kGemm, us(150), us(250), 7);
    b.kernel(0, 0, kAllReduce, us(60), us(180), 13);
    b.copy(0, 0, CopyKind::HtoD, us(260), us(280), 1 << 20);
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.devices.size(), 1u);
    const OverlapMetrics& m = a.devices[0].totals;
    EXPECT_EQ(m.window_ns, us(280));
    EXPECT_EQ(m.compute_ns, us(200));
    EXPECT_EQ(m.comm_ns, us(120));
    EXPECT_EQ(m.overlap_ns, us(70));
    EXPECT_EQ(m.exposed_comm_ns, us(50));
    EXPECT_EQ(m.busy_ns, us(270));
    EXPECT_EQ(m.idle_ns, us(10));
    EXPECT_NEAR(*m.overlap_ratio, 0.5833, 1e-4);
    EXPECT_DOUBLE_EQ(*m.achieved_speedup, 1.28);
    EXPECT_DOUBLE_EQ(*m.ideal_speedup, 1.6);
    ASSERT_EQ(a.devices[0].collectives.size(), 1u);
    const CollectiveInstance& op = a.devices[0].collectives[0];
    EXPECT_EQ(op.collective, "AllReduce");
    EXPECT_EQ(op.datatype, "bf16");
    EXPECT_EQ(op.duration_ns, us(120));
    EXPECT_EQ(op.overlapped_ns, us(70));
    EXPECT_EQ(op.exposed_ns, us(50));
    EXPECT_FALSE(op.bytes.has_value());
    EXPECT_EQ(op.step, -1);
    // Single device: the summary is the device's totals.
    EXPECT_EQ(a.summary.overlap_ns, us(70));
    EXPECT_DOUBLE_EQ(*a.summary.achieved_speedup, 1.28);
    EXPECT_FALSE(a.spread.has_value());
    EXPECT_TRUE(a.matched.empty());
}

// docs/metrics.md, Example 1 with --comm-copies: the HtoD copy joins M.
TEST(AnalysisExample, CommCopiesMovesHostCopiesIntoCommunication) {
    TraceBuilder b;
    b.kernel(0, 0, kGemm, us(0), us(100), 7);
    b.kernel(0, 0, kGemm, us(150), us(250), 7);
    b.kernel(0, 0, kAllReduce, us(60), us(180), 13);
    b.copy(0, 0, CopyKind::HtoD, us(260), us(280), 1 << 20);
    AnalysisSettings s;
    s.commCopies = true;
    const Analysis a = analyze(b.finalized(), s);
    const OverlapMetrics& m = a.devices[0].totals;
    EXPECT_EQ(m.comm_ns, us(140));
    EXPECT_EQ(m.exposed_comm_ns, us(70));
    ASSERT_EQ(a.devices[0].collectives.size(), 2u);
    EXPECT_EQ(a.devices[0].collectives[1].name, "Memcpy HtoD");
    EXPECT_EQ(*a.devices[0].collectives[1].bytes, 1u << 20);
    EXPECT_DOUBLE_EQ(*a.devices[0].collectives[1].bandwidth_gbps, 1048576.0 / 20000.0);
}

// docs/metrics.md, Example 2: steps projected through correlation ids.
TraceBuilder twoSteps() {
    TraceBuilder b;
    b.range(0, "ProfilerStep#1", us(0), us(50));
    b.range(0, "ProfilerStep#2", us(50), us(120));
    b.range(0, "forward", us(0), us(40));  // not a step
    b.launched(0, 0, kGemm, us(5), us(10), us(40), 7);
    b.launched(0, 0, kAllReduce, us(20), us(30), us(70), 13);
    b.launched(0, 0, kGemm, us(55), us(70), us(110), 7);
    b.launched(0, 0, kAllReduce, us(60), us(100), us(130), 13, /*tid=*/2);  // autograd thread
    b.launched(0, 0, kGemm, us(130), us(140), us(150), 7);                  // launched after the last step
    return b;
}

TEST(AnalysisExample, StepsProjectedThroughCorrelation) {
    TraceBuilder b = twoSteps();
    const Analysis a = analyze(b.finalized());
    const DeviceAnalysis& d = a.devices[0];
    ASSERT_EQ(d.steps.size(), 2u);
    const StepAnalysis& s1 = d.steps[0];
    EXPECT_EQ(s1.name, "ProfilerStep#1");
    EXPECT_EQ(s1.start_ns, us(10));
    EXPECT_EQ(s1.end_ns, us(70));
    EXPECT_EQ(s1.metrics.window_ns, us(60));
    EXPECT_EQ(s1.metrics.compute_ns, us(30));
    EXPECT_EQ(s1.metrics.comm_ns, us(40));
    EXPECT_EQ(s1.metrics.overlap_ns, us(10));
    EXPECT_EQ(s1.metrics.exposed_comm_ns, us(30));
    EXPECT_EQ(s1.metrics.idle_ns, 0);
    EXPECT_DOUBLE_EQ(*s1.metrics.overlap_ratio, 0.25);
    EXPECT_DOUBLE_EQ(*s1.metrics.achieved_speedup, 70.0 / 60.0);
    EXPECT_DOUBLE_EQ(*s1.metrics.ideal_speedup, 1.75);
    EXPECT_TRUE(s1.bottleneck.communicationBound);
    EXPECT_EQ(s1.bottleneck.collective, 0);
    EXPECT_EQ(s1.bottleneck.exposed_ns, us(30));
    EXPECT_DOUBLE_EQ(*s1.bottleneck.share, 1.0);
    ASSERT_EQ(s1.bottleneck.findings.size(), 1u);
    EXPECT_EQ(s1.bottleneck.findings[0].kind, FindingKind::CommunicationBound);
    EXPECT_EQ(s1.bottleneck.findings[0].exposed_ns, us(10));

    const StepAnalysis& s2 = d.steps[1];
    EXPECT_EQ(s2.start_ns, us(70));
    EXPECT_EQ(s2.end_ns, us(130));
    EXPECT_EQ(s2.metrics.compute_ns, us(40));
    EXPECT_EQ(s2.metrics.comm_ns, us(30));
    EXPECT_EQ(s2.metrics.overlap_ns, us(10));
    EXPECT_EQ(s2.metrics.exposed_comm_ns, us(20));
    EXPECT_NEAR(*s2.metrics.overlap_ratio, 1.0 / 3.0, 1e-12);
    EXPECT_FALSE(s2.bottleneck.communicationBound);
    EXPECT_EQ(s2.bottleneck.collective, 1);
    EXPECT_EQ(s2.bottleneck.exposed_ns, us(20));
    EXPECT_DOUBLE_EQ(*s2.bottleneck.share, 1.0);
    EXPECT_TRUE(s2.bottleneck.findings.empty());

    EXPECT_EQ(d.totals.window_ns, us(140));
    EXPECT_EQ(d.totals.compute_ns, us(80));
    EXPECT_EQ(d.totals.comm_ns, us(70));
    EXPECT_EQ(d.totals.overlap_ns, us(20));
    EXPECT_EQ(d.totals.exposed_comm_ns, us(50));
    EXPECT_EQ(d.totals.busy_ns, us(130));
    EXPECT_EQ(d.totals.idle_ns, us(10));
    EXPECT_DOUBLE_EQ(*d.totals.overlap_ratio, 20.0 / 70.0);
    EXPECT_DOUBLE_EQ(*d.totals.achieved_speedup, 150.0 / 130.0);
    EXPECT_DOUBLE_EQ(*d.totals.ideal_speedup, 150.0 / 80.0);
    ASSERT_EQ(d.collectives.size(), 2u);
    EXPECT_EQ(d.collectives[0].step, 0);
    EXPECT_EQ(d.collectives[1].step, 1);
    EXPECT_TRUE(a.warnings.empty());
}

TEST(AnalysisSteps, StepWithoutGpuWorkIsDroppedWithAWarning) {
    TraceBuilder b = twoSteps();
    b.range(0, "ProfilerStep#3", us(200), us(300));
    const Analysis a = analyze(b.finalized());
    EXPECT_EQ(a.devices[0].steps.size(), 2u);
    ASSERT_EQ(a.warnings.size(), 1u);
    EXPECT_NE(a.warnings[0].find("ProfilerStep#3"), std::string::npos);
}

TEST(AnalysisSteps, UnknownCorrelationIdsAreNotProjected) {
    TraceBuilder b = twoSteps();
    b.api(0, us(30), us(31), 0);                    // an API call with no correlation id...
    b.kernel(0, 0, kGemm, us(300), us(310), 7, 0);  // ...and a kernel with none
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.devices[0].steps.size(), 2u);
    EXPECT_EQ(a.devices[0].steps[0].end_ns, us(70));
}

TEST(AnalysisSteps, CustomPatternAndInvalidPattern) {
    TraceBuilder b = twoSteps();
    AnalysisSettings s;
    s.stepPattern = "^forward$";
    const Analysis a = analyze(b.finalized(), s);
    ASSERT_EQ(a.devices[0].steps.size(), 1u);
    EXPECT_EQ(a.devices[0].steps[0].name, "forward");
    EXPECT_EQ(a.devices[0].steps[0].end_ns, us(70));
    s.stepPattern = "step(";
    EXPECT_THROW(analyze(b.capture, s), std::invalid_argument);
}

TEST(AnalysisSteps, DefaultPatternMatchesCommonNames) {
    TraceBuilder b;
    const char* names[] = {"ProfilerStep#7", "step 3",     "Step_4",   "iteration 12",
                           "Iteration#2",    "train_step", "stepping", "ProfilerStep#"};
    TimeNs t = 0;
    for (const char* n : names) {
        b.range(0, n, t, t + 10);
        b.launched(0, 0, kGemm, t + 1, t + 2, t + 5);
        t += 20;
    }
    const Analysis a = analyze(b.finalized());
    std::vector<std::string> got;
    for (const auto& s : a.devices[0].steps) got.push_back(s.name);
    EXPECT_EQ(got, (std::vector<std::string>{"ProfilerStep#7", "step 3", "Step_4", "iteration 12", "Iteration#2"}));
}

TEST(AnalysisSteps, OverlappingRangesPreferTheLaunchingThread) {
    TraceBuilder b;
    b.range(0, "step 1", us(0), us(100), /*tid=*/1);
    b.range(0, "step 2", us(50), us(150), /*tid=*/2);
    b.launched(0, 0, kGemm, us(60), us(60), us(70), 7, /*tid=*/1);  // inside both: thread 1
    b.launched(0, 0, kGemm, us(70), us(80), us(90), 7, /*tid=*/2);  // inside both: thread 2
    b.launched(0, 0, kGemm, us(75), us(95), us(99), 7, /*tid=*/3);  // inside both: earliest range
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.devices[0].steps.size(), 2u);
    EXPECT_EQ(a.devices[0].steps[0].start_ns, us(60));
    EXPECT_EQ(a.devices[0].steps[0].end_ns, us(99));
    EXPECT_EQ(a.devices[0].steps[1].start_ns, us(80));
    EXPECT_EQ(a.devices[0].steps[1].end_ns, us(90));
}

TEST(AnalysisSteps, GpuSideAnnotationsAreUsedWhenNoCpuStepExists) {
    TraceBuilder b;
    // Kineto writes one gpu_user_annotation per stream: merged by name.
    b.range(0, "ProfilerStep#1", us(0), us(60), 0, /*onGpu=*/true);
    b.range(0, "ProfilerStep#1", us(10), us(80), 0, true);
    b.range(0, "ProfilerStep#2", us(100), us(150), 0, true);
    b.range(0, "ProfilerStep#3", us(300), us(400), 0, true);  // nothing runs there
    b.kernel(0, 0, kGemm, us(0), us(50), 7);
    b.kernel(0, 0, kAllReduce, us(40), us(80), 13);
    b.kernel(0, 0, kAllReduce, us(110), us(120), 13);
    const Analysis a = analyze(b.finalized());
    const DeviceAnalysis& d = a.devices[0];
    ASSERT_EQ(d.steps.size(), 2u);
    EXPECT_EQ(d.steps[0].start_ns, us(0));
    EXPECT_EQ(d.steps[0].end_ns, us(80));
    EXPECT_EQ(d.steps[0].metrics.overlap_ns, us(10));
    EXPECT_EQ(d.steps[1].start_ns, us(100));
    EXPECT_EQ(d.steps[1].metrics.idle_ns, us(40));
    EXPECT_EQ(d.collectives[0].step, 0);
    EXPECT_EQ(d.collectives[1].step, 1);
    EXPECT_EQ(a.warnings.size(), 1u);
}

TEST(AnalysisFindings, CommOnComputeStreamAndAfterLastCompute) {
    TraceBuilder b;
    b.range(0, "step 1", us(0), us(10));
    b.launched(0, 0, kGemm, us(1), us(0), us(100), 7);
    b.launched(0, 0, kAllReduce, us(2), us(100), us(150), 7);  // same stream, after compute
    const Analysis a = analyze(b.finalized());
    const auto& f = a.devices[0].steps[0].bottleneck.findings;
    ASSERT_TRUE(has(f, FindingKind::CommOnComputeStream));
    EXPECT_EQ(find(f, FindingKind::CommOnComputeStream)->exposed_ns, us(50));
    EXPECT_NE(find(f, FindingKind::CommOnComputeStream)->message.find("stream(s) 7"), std::string::npos);
    ASSERT_TRUE(has(f, FindingKind::CommAfterLastCompute));
    EXPECT_EQ(find(f, FindingKind::CommAfterLastCompute)->exposed_ns, us(50));
    EXPECT_FALSE(has(f, FindingKind::CommunicationBound));
    EXPECT_FALSE(has(f, FindingKind::IdleGap));
    EXPECT_TRUE(has(a.devices[0].findings, FindingKind::CommOnComputeStream));
}

TEST(AnalysisFindings, NoFindingsForWellOverlappedStep) {
    TraceBuilder b;
    b.range(0, "step 1", us(0), us(10));
    b.launched(0, 0, kGemm, us(1), us(0), us(100), 7);
    b.launched(0, 0, kAllReduce, us(2), us(20), us(80), 13);
    const Analysis a = analyze(b.finalized());
    EXPECT_TRUE(a.devices[0].steps[0].bottleneck.findings.empty());
    EXPECT_EQ(a.devices[0].steps[0].bottleneck.exposed_ns, 0);
    EXPECT_EQ(a.devices[0].steps[0].bottleneck.collective, -1);
    EXPECT_FALSE(a.devices[0].steps[0].bottleneck.share.has_value());
}

TEST(AnalysisFindings, ManySmallCollectivesAndIdleGap) {
    TraceBuilder b;
    b.range(0, "step 1", 0, us(100));
    b.launched(0, 0, kGemm, 1, 0, us(1000), 7);
    // 32 AllReduces of 5 us each after compute, no sizes known: small by duration.
    for (int i = 0; i < 32; ++i) b.launched(0, 0, kAllReduce, 10 + i, us(1000) + us(10) * i, us(1005) + us(10) * i, 13);
    b.launched(0, 0, kGemm, 50, us(3000), us(3100), 7);  // after a 1.685 ms gap
    const Analysis a = analyze(b.finalized());
    const auto& f = a.devices[0].steps[0].bottleneck.findings;
    ASSERT_TRUE(has(f, FindingKind::ManySmallCollectives));
    EXPECT_EQ(find(f, FindingKind::ManySmallCollectives)->exposed_ns, us(160));
    ASSERT_TRUE(has(f, FindingKind::IdleGap));
    EXPECT_EQ(find(f, FindingKind::IdleGap)->exposed_ns, us(3000) - us(1315));
    // Findings come largest exposed time first.
    EXPECT_EQ(f.front().kind, FindingKind::IdleGap);

    AnalysisSettings s;
    s.smallCollectiveCount = 33;
    s.idleGapNs = us(2000);
    const auto& f2 = analyze(b.capture, s).devices[0].steps[0].bottleneck.findings;
    EXPECT_FALSE(has(f2, FindingKind::ManySmallCollectives));
    EXPECT_FALSE(has(f2, FindingKind::IdleGap));
}

TEST(AnalysisPlugin, RowsMatchByGpuTimeThenByOrder) {
    TraceBuilder b;
    const std::string generic = "ncclDevKernel_Generic";
    b.kernel(0, 0, kAllReduce, us(10), us(20), 13);
    b.kernel(0, 0, kAllReduce, us(30), us(40), 13);
    b.kernel(0, 0, generic, us(50), us(60), 13);
    b.kernel(0, 0, "ncclDevKernel_AllGather_RING_LL", us(70), us(80), 13);
    // Timed rows: the second AllReduce, and two fused rows on the Generic kernel.
    b.pluginRow(0, 0, 0xabc, 1, "AllReduce", 4000, us(1), us(31), us(39), "NVLS", "SIMPLE");
    b.pluginRow(0, 0, 0xabc, 0, "ReduceScatter", 1000, us(2), us(51), us(59));
    b.pluginRow(0, 0, 0xabc, 1, "ReduceScatter", 3000, us(3), us(52), us(58));
    // Untimed rows, by order per type: first remaining AllReduce, first AllGather.
    b.pluginRow(0, 0, 0xabc, 0, "AllReduce", 2000, us(0));
    b.pluginRow(0, 0, 0xabc, 0, "AllGather", 8000, us(4));
    b.pluginRow(0, 0, 0xabc, 0, "Broadcast", 1, us(5));  // no kernel: ignored
    const Analysis a = analyze(b.finalized());
    const auto& ops = a.devices[0].collectives;
    ASSERT_EQ(ops.size(), 4u);
    EXPECT_EQ(*ops[0].bytes, 2000u);
    EXPECT_EQ(*ops[0].seqNumber, 0u);
    EXPECT_EQ(*ops[1].bytes, 4000u);
    EXPECT_EQ(*ops[1].seqNumber, 1u);
    EXPECT_EQ(ops[1].algo, "NVLS");
    EXPECT_DOUBLE_EQ(*ops[1].bandwidth_gbps, 4000.0 / 10000.0);
    EXPECT_EQ(ops[2].collective, "ReduceScatter");  // from the plugin row: name says Generic
    EXPECT_EQ(*ops[2].bytes, 4000u);                // fused rows add up
    EXPECT_EQ(*ops[2].seqNumber, 0u);
    EXPECT_EQ(*ops[3].bytes, 8000u);
    EXPECT_EQ(*ops[0].commHash, 0xabcu);
}

// The H200 pipeline (docs/measurements.md, 2026-11-26): the plugin's rows
// are 387 us later than CUPTI's kernels; a stage's last forward send and its
// first backward receive ran as one fused SendRecv kernel of 7.3 ms, while
// each row's own channels took 88 us, and the median shift put both rows
// 43 ns before that kernel. Both rows belong on it (two parts); before, the
// first went there by order and the second to no kernel.
TEST(AnalysisPlugin, RowsOfAFusedGroupJustBeforeTheirKernelStillLandOnIt) {
    TraceBuilder b;
    const std::string sendRecv = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
    const TimeNs offset = us(387);
    TimeNs t = us(1000);
    for (int i = 0; i < 16; ++i) {  // single sends, each its own kernel, of distinct durations
        const TimeNs d = us(40 + 7 * i);
        b.kernel(0, 0, sendRecv, t, t + d, 13);
        b.p2pRow(0, 0, 0xfeed, "Send", 1, 2, 1 << 20, t + offset + 100, t + offset + d - 2'000);
        t += d + us(100);
    }
    const TimeNs fused = t;
    b.kernel(0, 0, sendRecv, fused, fused + us(7300), 13);
    b.p2pRow(0, 0, 0xfeed, "Send", 1, 2, 1 << 20, fused + offset - 43, fused + offset - 43 + us(88));
    b.p2pRow(0, 0, 0xfeed, "Recv", 1, 2, 1 << 20, fused + offset - 43, fused + offset - 43 + us(88));
    const Analysis a = analyze(b.finalized());
    const auto& ops = a.devices[0].collectives;
    ASSERT_EQ(ops.size(), 17u);
    for (size_t i = 0; i < 16; ++i) {
        ASSERT_EQ(ops[i].p2p.size(), 1u) << i;
        EXPECT_TRUE(ops[i].p2p[0].send) << i;
        EXPECT_EQ(ops[i].p2p[0].seq, i) << i;
    }
    ASSERT_EQ(ops[16].p2p.size(), 2u);
    EXPECT_TRUE(ops[16].p2p[0].send);
    EXPECT_EQ(ops[16].p2p[0].seq, 16u);
    EXPECT_FALSE(ops[16].p2p[1].send);
    EXPECT_EQ(ops[16].p2p[1].seq, 0u);
    EXPECT_EQ(*ops[16].bytes, 2u << 20);
}

TEST(AnalysisMultiRank, SkewAndTransferByOrder) {
    // docs/metrics.md, Example 3.
    TraceBuilder b;
    b.kernel(0, 0, kAllReduce, us(100), us(300), 13);
    b.kernel(1, 0, kAllReduce, us(180), us(320), 13);
    b.kernel(0, 0, kAllReduce, us(500), us(600), 13);
    b.kernel(1, 0, kAllReduce, us(500), us(610), 13);
    b.kernel(0, 0, "ncclDevKernel_AllGather_RING_LL", us(700), us(720), 13);  // rank 0 only
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.matched.size(), 2u);
    EXPECT_EQ(a.matched[0].collective, "AllReduce");
    EXPECT_EQ(a.matched[0].instances, (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}}));
    EXPECT_EQ(a.matched[0].skew_ns, us(80));
    EXPECT_EQ(a.matched[0].transfer_ns, us(120));
    EXPECT_EQ(a.matched[1].skew_ns, 0);
    EXPECT_EQ(a.matched[1].transfer_ns, us(100));
    EXPECT_FALSE(a.matched[0].seqNumber.has_value());
    EXPECT_EQ(a.total_skew_ns, us(80));
}

TEST(AnalysisMultiRank, PluginSequenceNumbersBeatOrder) {
    // Rank 1's capture misses the first AllReduce: by order the pairs would
    // be off by one; (commHash, seqNumber) pairs them correctly.
    TraceBuilder b;
    b.kernel(0, 0, kAllReduce, us(100), us(200), 13);
    b.kernel(0, 0, kAllReduce, us(300), us(400), 13);
    b.kernel(1, 0, kAllReduce, us(310), us(410), 13);
    b.pluginRow(0, 0, 7, 0, "AllReduce", 64, us(90), us(101), us(199));
    b.pluginRow(0, 0, 7, 1, "AllReduce", 64, us(290), us(301), us(399));
    b.pluginRow(1, 0, 7, 1, "AllReduce", 64, us(295), us(311), us(409));
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.matched.size(), 1u);
    EXPECT_EQ(*a.matched[0].seqNumber, 1u);
    EXPECT_EQ(*a.matched[0].commHash, 7u);
    EXPECT_EQ(a.matched[0].instances, (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}));
    EXPECT_EQ(a.matched[0].skew_ns, us(10));
    EXPECT_EQ(a.matched[0].transfer_ns, us(90));
}

TEST(AnalysisMultiRank, SpreadOverCommonSteps) {
    TraceBuilder b;
    for (int rank = 0; rank < 3; ++rank) {
        const TimeNs slow = us(10) * rank;  // rank r's step is 10r us longer
        b.range(rank, "step 1", 0, us(10));
        b.launched(rank, 0, kGemm, 1, 0, us(100) + slow, 7);
        b.launched(rank, 0, kAllReduce, 2, us(50), us(150) + slow, 13);
    }
    b.range(2, "step 2", us(500), us(510));  // only rank 2 has it
    b.launched(2, 0, kGemm, us(501), us(600), us(700), 7);
    const Analysis a = analyze(b.finalized());
    ASSERT_TRUE(a.spread.has_value());
    EXPECT_EQ(a.spread->step_time_min_ns, us(150));
    EXPECT_EQ(a.spread->step_time_median_ns, us(160));
    EXPECT_EQ(a.spread->step_time_max_ns, us(170));
    // rank r: overlap [50, 100 + 10r) over comm [50, 150 + 10r): (50 + 10r) / (100 + 10r)
    EXPECT_DOUBLE_EQ(*a.spread->overlap_ratio_min, 50.0 / 100.0);
    EXPECT_DOUBLE_EQ(*a.spread->overlap_ratio_median, 60.0 / 110.0);
    EXPECT_DOUBLE_EQ(*a.spread->overlap_ratio_max, 70.0 / 120.0);
}

TEST(DeviceCoverage, WindowQueriesForTheGui) {
    TraceBuilder b;
    b.kernel(0, 0, kGemm, us(0), us(100), 7);
    b.kernel(0, 0, kAllReduce, us(60), us(180), 13);
    const Capture& c = b.finalized();
    const DeviceCoverage cov = buildDeviceCoverage(c, c.processes[0].devices[0]);
    EXPECT_EQ(cov.span, (Interval{0, us(180)}));
    EXPECT_EQ(cov.overlap.covered(us(50), us(70)), us(10));
    EXPECT_EQ(cov.exposedComm.covered(us(50), us(200)), us(80));
    EXPECT_EQ(cov.metrics({us(50), us(120)}).compute_ns, us(50));
}

TEST(AnalysisInterference, Example4) {
    // docs/metrics.md, Example 4.
    TraceBuilder b;
    b.kernel(0, 0, kAllReduce, us(100), us(200), 13);
    for (auto [s, e] : {std::pair{0, 10}, {20, 30}, {40, 52}, {100, 115}, {190, 210}, {195, 215}})
        b.kernel(0, 0, "gemm", us(s), us(e));
    b.kernel(0, 0, "layernorm", us(120), us(140));
    const Analysis a = analyze(b.finalized());
    const auto& d = a.devices.at(0);
    EXPECT_EQ(d.interference.overlapped_compute_ns, us(55));
    EXPECT_EQ(d.interference.interfered_compute_ns, us(35));
    EXPECT_EQ(d.interference.interference_ns, us(15));
    EXPECT_DOUBLE_EQ(*d.interference.interference_coverage, 35.0 / 55.0);
    EXPECT_DOUBLE_EQ(*d.interference.compute_slowdown, 0.75);
    EXPECT_EQ(d.totals.overlap_ns, us(45));
    EXPECT_EQ(d.interference.net_overlap_gain_ns, us(30));
    ASSERT_EQ(d.signatures.size(), 2u);
    EXPECT_EQ(d.signatures[0].name, "gemm");
    EXPECT_EQ(d.signatures[0].isolated, 3);
    EXPECT_EQ(d.signatures[0].overlapped, 2);
    EXPECT_EQ(d.signatures[0].baseline_ns, us(10));
    EXPECT_EQ(d.signatures[0].median_overlapped_ns, us(15));
    EXPECT_EQ(d.signatures[0].slowdown_ns, us(15));
    EXPECT_EQ(d.signatures[1].name, "layernorm");
    EXPECT_EQ(d.signatures[1].isolated, 0);
    EXPECT_FALSE(d.signatures[1].baseline_ns.has_value());
    EXPECT_EQ(d.signatures[1].median_overlapped_ns, us(20));
    EXPECT_FALSE(d.signatures[1].slowdown_ns.has_value());
}

TEST(AnalysisWaitTransfer, Example5) {
    // docs/metrics.md, Example 5.
    TraceBuilder b;
    b.kernel(0, 0, kAllReduce, us(100), us(300), 13);
    b.copy(0, 0, CopyKind::PtoP, us(120), us(160));
    b.kernel(0, 0, "gemm", us(150), us(250));
    b.kernel(1, 0, kAllReduce, us(180), us(320), 13);
    const Analysis a = analyze(b.finalized());
    ASSERT_EQ(a.devices.size(), 2u);
    const auto& r0 = a.devices[0];
    const auto& r1 = a.devices[1];
    ASSERT_TRUE(r0.wait && r1.wait);
    EXPECT_EQ(r0.wait->comm_wait_ns, us(40));
    EXPECT_EQ(r0.wait->exposed_wait_ns, us(20));
    EXPECT_EQ(r0.totals.exposed_comm_ns, us(100));
    EXPECT_EQ(r0.wait->exposed_transfer_ns, us(80));
    EXPECT_EQ(r1.wait->comm_wait_ns, 0);
    EXPECT_EQ(r1.wait->exposed_transfer_ns, us(140));
    EXPECT_EQ(r1.last_arrivals, 1);
    EXPECT_EQ(r1.delay_caused_ns, us(80));
    EXPECT_EQ(r0.last_arrivals, 0);
    EXPECT_EQ(r0.delay_caused_ns, 0);
}

TEST(AnalysisWaitTransfer, AlignCollectivesExample) {
    // docs/metrics.md, section 7c: ends 1,010, 1,000 and 990 us apart -> -1,000 us.
    TraceBuilder b;
    const int ends0[] = {300, 600, 900};
    const int late[] = {1010, 1000, 990};
    for (int i = 0; i < 3; ++i) {
        b.kernel(0, 0, kAllReduce, us(ends0[i] - 100), us(ends0[i]), 13);
        b.kernel(1, 0, kAllReduce, us(ends0[i] + late[i] - 100), us(ends0[i] + late[i]), 13);
    }
    AnalysisSettings s;
    s.alignCollectives = true;
    const Analysis a = analyze(b.finalized(), s);
    EXPECT_EQ(a.devices[0].clock_shift_ns, 0);
    EXPECT_EQ(a.devices[1].clock_shift_ns, -us(1000));
    EXPECT_EQ(a.devices[1].collectives[1].end_ns, us(600));
}

}  // namespace
}  // namespace osc

// The what-if model's pieces against hand-worked examples (docs/metrics.md
// "What-if" works the step below through end to end).
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/whatif/cost_fit.h"
#include "analyzer/whatif/readiness.h"
#include "analyzer/whatif/replay.h"
#include "analyzer/whatif/whatif.h"
#include "test_metrics_support.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace osc::whatif {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// ---- cost fit ----------------------------------------------------------------

TEST(WhatIfCostFit, LeastSquaresByHand) {
    // x = 1000, 3000, 2000; y = 3000, 7000, 5500. Means 2000 and 5166.67;
    // Sxy = 4e6, Sxx = 2e6: slope 2, intercept 5166.67 - 4000 = 1166.67.
    // Residuals -166.67, -166.67, +333.33: SSres = 166666.7; SStot = 8166666.7.
    const CostModel m = fitCost({{1000, 3000}, {3000, 7000}, {2000, 5500}}, 10'000);
    EXPECT_NEAR(m.ns_per_byte, 2.0, 1e-12);
    EXPECT_NEAR(m.alpha_ns, 3500.0 / 3.0, 1e-9);
    ASSERT_TRUE(m.r2.has_value());
    EXPECT_NEAR(*m.r2, 1.0 - 166666.0 / 8166666.0, 1e-6);
    EXPECT_EQ(m.samples, 3);
    EXPECT_EQ(m.distinctSizes, 3);
    EXPECT_EQ(m.alphaSource, "fit");
    EXPECT_EQ(m.costNs(500), 2167);  // 1166.67 + 1000, rounded
}

TEST(WhatIfCostFit, OneSizeTakesTheDefaultAlpha) {
    // Two samples of 1000 bytes, 5000 and 7000 ns: alpha 2000 (the default),
    // slope = sum x(y - alpha) / sum x^2 = (3000 + 5000) * 1000 / 2e6 = 4.
    const CostModel m = fitCost({{1000, 5000}, {1000, 7000}}, 2000);
    EXPECT_EQ(m.alphaSource, "default");
    EXPECT_DOUBLE_EQ(m.alpha_ns, 2000);
    EXPECT_DOUBLE_EQ(m.ns_per_byte, 4.0);
    EXPECT_FALSE(m.r2.has_value());
    // The default never exceeds the shortest sample.
    EXPECT_DOUBLE_EQ(fitCost({{1000, 1500}}, 2000).alpha_ns, 1500);
}

TEST(WhatIfCostFit, NegativeInterceptIsRefittedThroughZero) {
    // y = 3x - 1000 on x = 1000, 2000: intercept -1000. Through zero:
    // slope = (1000*2000 + 2000*5000) / (1e6 + 4e6) = 2.4.
    const CostModel m = fitCost({{1000, 2000}, {2000, 5000}}, 10'000);
    EXPECT_EQ(m.alphaSource, "zero");
    EXPECT_DOUBLE_EQ(m.alpha_ns, 0);
    EXPECT_DOUBLE_EQ(m.ns_per_byte, 2.4);
}

TEST(WhatIfCostFit, GivenAlphaAndBadInput) {
    const CostModel m = fitCost({{1000, 3000}, {3000, 7000}}, 10'000, 1000.0);
    EXPECT_EQ(m.alphaSource, "given");
    EXPECT_DOUBLE_EQ(m.alpha_ns, 1000);
    EXPECT_DOUBLE_EQ(m.ns_per_byte, (1000.0 * 2000 + 3000.0 * 6000) / (1e6 + 9e6));
    EXPECT_THROW(fitCost({{0, 100}}, 10'000), std::invalid_argument);
    // Bigger collectives faster: a flat line at the mean.
    const CostModel flat = fitCost({{1000, 5000}, {2000, 3000}}, 10'000);
    EXPECT_DOUBLE_EQ(flat.ns_per_byte, 0);
    EXPECT_DOUBLE_EQ(flat.alpha_ns, 4000);
}

// ---- closing buckets -----------------------------------------------------------

TEST(WhatIfReplay, ClosesBucketsLikeDdp) {
    // Gradients of 4, 4, 8, 2 bytes ready at 10, 20, 30, 40.
    const std::vector<ReadyPoint> pts{{10, 4}, {20, 8}, {30, 16}, {40, 18}};
    // At least 5: 4+4 at 20, 8 at 30, the rest (2) at 40.
    auto b = closeBuckets(pts, 5, BucketRule::AtLeast);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0].ready, 20);
    EXPECT_DOUBLE_EQ(b[0].bytes, 8);
    EXPECT_EQ(b[1].ready, 30);
    EXPECT_DOUBLE_EQ(b[1].bytes, 8);
    EXPECT_EQ(b[2].ready, 40);
    EXPECT_DOUBLE_EQ(b[2].bytes, 2);
    // At most 5: 4 (4+4 would exceed), 4, 8 alone (larger than the cap), 2.
    b = closeBuckets(pts, 5, BucketRule::AtMost);
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[0].ready, 10);
    EXPECT_EQ(b[1].ready, 20);
    EXPECT_EQ(b[2].ready, 30);
    EXPECT_DOUBLE_EQ(b[2].bytes, 8);
    EXPECT_EQ(b[3].ready, 40);
    // At most 8: 4+4 exactly fits, then 8, then 2.
    b = closeBuckets(pts, 8, BucketRule::AtMost);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0].ready, 20);
    // At least 8: 4+4 reaches it exactly at 20.
    b = closeBuckets(pts, 8, BucketRule::AtLeast);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0].ready, 20);
    // A cap above everything: one bucket at the last point.
    b = closeBuckets(pts, 100, BucketRule::AtLeast);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].ready, 40);
    EXPECT_DOUBLE_EQ(b[0].bytes, 18);
}

TEST(WhatIfReplay, SchedulesOneStreamAndSeveralRanks) {
    CostModel cost;
    cost.alpha_ns = 100;
    cost.ns_per_byte = 1;
    // Ready at 0 (200 B) and 50 (100 B); lag 10, gap 5:
    // [10, 310), then max(60, 315) = 315 -> [315, 515).
    auto iv = scheduleBuckets({{0, 200}, {50, 100}}, cost, {10, 5});
    ASSERT_EQ(iv.size(), 2u);
    EXPECT_EQ(iv[0], (Interval{10, 310}));
    EXPECT_EQ(iv[1], (Interval{315, 515}));
    // Two ranks: rank 1 has its gradients 400 ns later. Bucket 0 moves once
    // rank 1 arrives at 400: ends 400 + 300 = 700; bucket 1 arrives at 700 on
    // both (rank 0 queued, rank 1 ready at 450) and ends 900.
    const std::vector<PlannedBucket> r0{{0, 200}, {50, 100}}, r1{{400, 200}, {450, 100}};
    auto joint = scheduleJoint({&r0, &r1}, {&cost, &cost}, {Latencies{}, Latencies{}});
    EXPECT_EQ(joint[0][0], (Interval{0, 700}));
    EXPECT_EQ(joint[1][0], (Interval{400, 700}));
    EXPECT_EQ(joint[0][1], (Interval{700, 900}));
    EXPECT_EQ(joint[1][1], (Interval{700, 900}));
}

// ---- one hand-worked step, end to end --------------------------------------------

// Forward f0 [100,200), f1 [200,300); backward b1 [300,1300) makes layer 1's
// 4000-byte gradient, b0 [1300,1800) layer 0's 2000 bytes; all-reduces cost
// 100 ns + 0.25 ns/byte (1100 and 600 ns): AR1 [1300,2400), AR0 queued
// [2400,3000); the optimizer [3000,3100) waits for AR0. Step [100,3100).
testing::TraceBuilder handStep(bool launches, bool backwardRange = false) {
    testing::TraceBuilder t;
    const std::string ar = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    struct K {
        const char* name;
        TimeNs launch, start, end;
        uint32_t stream;
    };
    const K ks[] = {{"fwd", 10, 100, 200, 7},  {"fwd", 20, 200, 300, 7},   {"bwd", 30, 300, 1300, 7},
                    {"", 40, 1300, 2400, 13},  {"bwd", 50, 1300, 1800, 7}, {"", 60, 2400, 3000, 13},
                    {"opt", 70, 3000, 3100, 7}};
    for (const K& k : ks) {
        const std::string name = *k.name ? k.name : ar;
        if (launches)
            t.launched(0, 0, name, k.launch, k.start, k.end, k.stream);
        else
            t.kernel(0, 0, name, k.start, k.end, k.stream);
    }
    if (launches)
        t.range(0, "step 0", 0, 1000);
    else
        t.range(0, "step 0", 100, 3100, 1, /*onGpu=*/true);  // no launches to project a host range
    if (backwardRange) t.range(0, "backward", 25, 65);
    t.pluginRow(0, 0, 7, 0, "AllReduce", 4000, 41);
    t.pluginRow(0, 0, 7, 1, "AllReduce", 2000, 61);
    return t;
}

WhatIfSettings tinyAndHuge() {
    WhatIfSettings s;
    s.bucketMb = {1000.0 / kMiB, 100};  // every gradient alone; everything in one bucket
    return s;
}

TEST(WhatIfHandStep, FitObservedAndScenarios) {
    testing::TraceBuilder t = handStep(true);
    const Capture& c = t.finalized();
    const Analysis a = analyze(c);
    const WhatIfResult r = runWhatIf(c, a, tinyAndHuge());
    ASSERT_EQ(r.devices.size(), 1u);
    const DeviceWhatIf& d = r.devices[0];
    ASSERT_TRUE(d.modelled) << d.reason;
    EXPECT_EQ(d.collective, "AllReduce");
    EXPECT_EQ(d.stream, 13u);
    EXPECT_NEAR(d.fit.alpha_ns, 100, 1e-6);
    EXPECT_NEAR(d.fit.ns_per_byte, 0.25, 1e-12);
    EXPECT_EQ(d.fit.samples, 2);
    EXPECT_NEAR(*d.fit.r2, 1.0, 1e-12);
    EXPECT_EQ(d.latencies.readyLagNs, 0);  // AR1 starts as b1 ends
    EXPECT_EQ(d.latencies.queueGapNs, 0);  // AR0 starts as AR1 ends
    // Observed: 2 buckets, step 3000, exposed |[1300,3000)| - |[1300,1800)| = 1200.
    EXPECT_EQ(d.observed.buckets, 2);
    EXPECT_EQ(d.observed.step_ns, 3000);
    EXPECT_EQ(d.observed.exposed_comm_ns, 1200);
    EXPECT_DOUBLE_EQ(d.observed.bucket_mb, 4000 / kMiB);  // the largest but the last
    EXPECT_EQ(d.observed.replayed_step_ns, 3000);
    EXPECT_EQ(d.observed.replayed_exposed_comm_ns, 1200);
    ASSERT_TRUE(d.self_check_error.has_value());
    EXPECT_DOUBLE_EQ(*d.self_check_error, 0.0);

    ASSERT_EQ(d.scenarios.size(), 2u);
    const ScenarioResult& each = d.scenarios[0];
    EXPECT_EQ(each.buckets, 2);
    EXPECT_EQ(each.step_ns, 3000);
    EXPECT_EQ(each.exposed_comm_ns, 1200);
    EXPECT_DOUBLE_EQ(*each.overlap_ratio, 500.0 / 1700.0);
    // No overlap: both ready at 1800: [1800,2900) [2900,3500), optimizer to
    // [3500,3600): step 3500. Perfect: both ready at 1300: as observed.
    EXPECT_EQ(each.no_overlap_step_ns, 3500);
    EXPECT_EQ(each.perfect_overlap_step_ns, 3000);
    EXPECT_TRUE(each.best);
    // One bucket of 6000 bytes ready at 1800: [1800,3400), optimizer moves to
    // [3400,3500): step 3400, nothing overlapped.
    const ScenarioResult& one = d.scenarios[1];
    EXPECT_EQ(one.buckets, 1);
    EXPECT_EQ(one.step_ns, 3400);
    EXPECT_EQ(one.exposed_comm_ns, 1600);
    EXPECT_DOUBLE_EQ(*one.overlap_ratio, 0.0);
    EXPECT_FALSE(one.best);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(WhatIfHandStep, ReadinessWithoutLaunchRecordsAndInTime) {
    // No API calls: AR1 started on an idle stream (ready 1300), AR0 queued
    // (ready unknown, at most its start); the gradient kernel named like b1's
    // ending before it (b0 at 1800) takes its bytes: the same points.
    testing::TraceBuilder t = handStep(false);
    const Capture& c = t.finalized();
    const Analysis a = analyze(c);
    WhatIfResult r = runWhatIf(c, a, tinyAndHuge());
    ASSERT_TRUE(r.devices[0].modelled) << r.devices[0].reason;
    EXPECT_EQ(r.devices[0].scenarios[1].step_ns, 3400);
    EXPECT_EQ(r.devices[0].observed.replayed_step_ns, 3000);
    ASSERT_FALSE(r.devices[0].notes.empty());
    EXPECT_NE(r.devices[0].notes[0].find("no host launch records"), std::string::npos);

    // Readiness linear in time: the backward start is extrapolated at the
    // later bucket's rate (2000 B per 500 ns): 1300 - 4000 / 4 = 300, which is
    // where b1 began; the curve is read at kernel ends 1300 and 1800 only.
    testing::TraceBuilder t2 = handStep(true);
    const Capture& c2 = t2.finalized();
    WhatIfSettings s = tinyAndHuge();
    s.readiness = ReadinessMode::Time;
    r = runWhatIf(c2, analyze(c2), s);
    EXPECT_EQ(r.devices[0].scenarios[0].step_ns, 3000);
    EXPECT_EQ(r.devices[0].scenarios[1].step_ns, 3400);
}

// A step whose backward pass has three kernels before the first bucket
// ("a" [300,500), "a" [500,800), "g" [800,1300)) and one before the second
// ("g" [1300,1800)); buckets of 4000 B ready at 1300 and 2000 B at 1800.
StepModel threeKernelStep() {
    StepModel s;
    s.start = 100;
    s.end = 3100;
    s.compute = {{100, 300, 10, 1}, {300, 500, 20, 2}, {500, 800, 30, 2}, {800, 1300, 40, 3}, {1300, 1800, 60, 3}};
    ObservedBucket b1, b0;
    b1.launch = 45;
    b1.bytes = 4000;
    b1.start = 1300;
    b1.end = 2400;
    b0.launch = 65;
    b0.bytes = 2000;
    b0.start = 2400;
    b0.end = 3000;
    s.buckets = {b1, b0};
    return s;
}

TEST(WhatIfReadiness, KernelsAndTime) {
    StepModel s = threeKernelStep();
    ASSERT_TRUE(assignReadiness(s));
    EXPECT_EQ(s.buckets[0].ready, 1300);  // the last compute launched before it: "g" at 40
    EXPECT_EQ(s.buckets[0].readyName, 3u);
    EXPECT_EQ(s.buckets[1].ready, 1800);
    // Kernels: only the ends of "g" kernels are points.
    buildReadyPoints(s, ReadinessMode::Kernels, std::nullopt);
    ASSERT_EQ(s.points.size(), 2u);
    EXPECT_EQ(s.points[0].time, 1300);
    EXPECT_DOUBLE_EQ(s.points[0].bytes, 4000);
    EXPECT_DOUBLE_EQ(s.points[1].bytes, 6000);
    // Time, with the backward start marked at 300: 4000 B over [300,1300)
    // read at 500 (800 B) and 800 (2000 B), then 1300 and 1800.
    buildReadyPoints(s, ReadinessMode::Time, TimeNs{300});
    ASSERT_EQ(s.points.size(), 4u);
    EXPECT_EQ(s.points[0].time, 500);
    EXPECT_DOUBLE_EQ(s.points[0].bytes, 800);
    EXPECT_EQ(s.points[1].time, 800);
    EXPECT_DOUBLE_EQ(s.points[1].bytes, 2000);
    EXPECT_DOUBLE_EQ(s.points[2].bytes, 4000);
    EXPECT_DOUBLE_EQ(s.points[3].bytes, 6000);
    // Time without a mark: the start extrapolated at the second bucket's rate
    // (2000 B / 500 ns): 1300 - 4000 / 4 = 300, the same points.
    buildReadyPoints(s, ReadinessMode::Time, std::nullopt);
    ASSERT_EQ(s.points.size(), 4u);
    EXPECT_DOUBLE_EQ(s.points[0].bytes, 800);
    // Two gradient kernels in the first bucket, one twice as long as the
    // other: durations 600, 300 and 500 against their median 500 round to
    // 2^0.25 and 2^-0.75 quarter octaves, a 2:1 split of 4000 B.
    s.compute = {{300, 900, 20, 3}, {1000, 1300, 40, 3}, {1300, 1800, 60, 3}};
    ASSERT_TRUE(assignReadiness(s));
    buildReadyPoints(s, ReadinessMode::Kernels, std::nullopt);
    ASSERT_EQ(s.points.size(), 3u);
    EXPECT_EQ(s.points[0].time, 900);
    EXPECT_NEAR(s.points[0].bytes, 8000.0 / 3, 1e-6);
    EXPECT_DOUBLE_EQ(s.points[1].bytes, 4000);
    // Kernels within a few percent of each other share equally.
    s.compute = {{300, 800, 20, 3}, {800, 1320, 40, 3}, {1320, 1800, 60, 3}};
    s.buckets[0].start = 1320;
    ASSERT_TRUE(assignReadiness(s));
    buildReadyPoints(s, ReadinessMode::Kernels, std::nullopt);
    EXPECT_DOUBLE_EQ(s.points[0].bytes, 2000);
}

TEST(WhatIfHandStep, TimeReadinessWithABackwardRange) {
    // The backward range marks b1's start; with one kernel per bucket the
    // points are the same as by kernels, and nothing had to be assumed.
    testing::TraceBuilder t = handStep(true, /*backwardRange=*/true);
    const Capture& c = t.finalized();
    WhatIfSettings s = tinyAndHuge();
    s.readiness = ReadinessMode::Time;
    const WhatIfResult r = runWhatIf(c, analyze(c), s);
    ASSERT_TRUE(r.devices[0].modelled);
    EXPECT_EQ(r.devices[0].scenarios[0].buckets, 2);
    EXPECT_TRUE(r.devices[0].notes.empty());  // launch records and a backward range: nothing assumed
}

TEST(WhatIfHandStep, NotModelledSaysWhy) {
    testing::TraceBuilder t;
    t.launched(0, 0, "fwd", 10, 100, 200);
    t.range(0, "step 0", 0, 1000);
    const Capture& c = t.finalized();
    WhatIfResult r = runWhatIf(c, analyze(c), tinyAndHuge());
    EXPECT_FALSE(r.devices[0].modelled);
    EXPECT_NE(r.devices[0].reason.find("no all-reduce"), std::string::npos);

    testing::TraceBuilder u;
    u.launched(0, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10, 100, 200, 13);
    u.range(0, "step 0", 0, 1000);
    const Capture& c2 = u.finalized();
    r = runWhatIf(c2, analyze(c2), tinyAndHuge());
    EXPECT_FALSE(r.devices[0].modelled);
    EXPECT_NE(r.devices[0].reason.find("sizes"), std::string::npos);

    testing::TraceBuilder v = handStep(true);
    v.capture.processes[0].ranges = RangeTable{};
    const Capture& c3 = v.finalized();
    r = runWhatIf(c3, analyze(c3), tinyAndHuge());
    EXPECT_NE(r.devices[0].reason.find("no steps"), std::string::npos);
}

TEST(WhatIfHandStep, SizesInferredFromDurations) {
    // Without plugin rows, --grad-mb shares 6000 B by time above alpha
    // (100 ns): 1000 and 500 ns -> 4000 and 2000 B, the true sizes.
    testing::TraceBuilder t = handStep(true);
    t.capture.processes[0].collectives = CollectiveTable{};
    const Capture& c = t.finalized();
    WhatIfSettings s = tinyAndHuge();
    s.alphaNs = 100;
    s.gradMb = 6000 / kMiB;
    const WhatIfResult r = runWhatIf(c, analyze(c), s);
    ASSERT_TRUE(r.devices[0].modelled) << r.devices[0].reason;
    EXPECT_NEAR(r.devices[0].fit.ns_per_byte, 0.25, 1e-9);
    EXPECT_EQ(r.devices[0].scenarios[1].step_ns, 3400);
}

TEST(WhatIfSettingsTest, RejectsBadValues) {
    WhatIfSettings s;
    s.bucketMb = {};
    EXPECT_THROW(s.validate(), std::invalid_argument);
    s.bucketMb = {0};
    EXPECT_THROW(s.validate(), std::invalid_argument);
    s.bucketMb = {25};
    s.alphaNs = -1;
    EXPECT_THROW(s.validate(), std::invalid_argument);
    s.alphaNs.reset();
    s.backwardPattern = "(";
    Capture empty;
    EXPECT_THROW(runWhatIf(empty, Analysis{}, s), std::invalid_argument);
}

}  // namespace
}  // namespace osc::whatif

// The what-if model on real captures from an H100 (examples/h100, one rank,
// --comm copies: each collective is a device-to-host plus host-to-device
// copy). Predictions are checked against step times the workload measured
// itself with CUDA events in other runs of the same sweep (GPU kit part 4,
// results.json `median_step_ms`; docs/measurements.md ("What-if against the measured bucket sweep") has the whole
// table), not against anything this code printed.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/whatif/whatif.h"

#include <gtest/gtest.h>

#include <map>

namespace osc::whatif {
namespace {

// ddp_overlap --comm copies --mode bucketed --bucket-mb N: median step, ms.
const std::map<double, double> kMeasuredMs{{1, 3.829}, {8, 3.844}, {25, 4.252}, {64, 5.385}};

WhatIfResult predict(const std::string& example, const std::vector<double>& sizes) {
    const Capture c = loadCaptures({std::string(OSC_SOURCE_DIR) + "/examples/h100/" + example});
    AnalysisSettings a;
    a.commCopies = true;
    WhatIfSettings s;
    s.bucketMb = sizes;
    s.rule = BucketRule::AtMost;  // ddp_overlap never lets a bucket exceed its size
    return runWhatIf(c, analyze(c, a), s);
}

void expectMeasured(const WhatIfResult& r, double tolerance) {
    ASSERT_TRUE(r.devices.size() == 1 && r.devices[0].modelled) << r.devices[0].reason;
    EXPECT_LT(std::abs(*r.devices[0].self_check_error), 0.01);
    for (const auto& s : r.devices[0].scenarios) {
        const double measured = kMeasuredMs.at(s.bucket_mb);
        // The capture's step is its GPU window; CUDA events also hold the
        // ~30 us between steps (0.5 to 1%).
        EXPECT_NEAR(static_cast<double>(s.step_ns) / 1e6 / measured, 1.0, tolerance) << s.bucket_mb << " MiB";
    }
}

TEST(WhatIfH100, BucketedCapturePredictsTheSweep) {
    // 25 MiB buckets (24, 24, 16 MiB) predict 16 buckets of 4 MiB, 8 of
    // 8 MiB and one of 64 MiB within 3% of what those runs measured.
    const WhatIfResult r = predict("ddp_bucketed_1rank_copies", {1, 8, 64});
    expectMeasured(r, 0.03);
    EXPECT_EQ(r.devices[0].observed.buckets, 3);
    EXPECT_EQ(r.devices[0].scenarios[0].buckets, 16);
    EXPECT_EQ(r.devices[0].scenarios[2].buckets, 1);
}

TEST(WhatIfH100, OneBucketCapturePredictsSmallerBuckets) {
    // Sequential: one 64 MiB round trip after the backward pass. The
    // gradient kernels (split-K reduces) give the readiness of each layer.
    const WhatIfResult r = predict("ddp_sequential_1rank_copies", {1, 8, 25});
    expectMeasured(r, 0.04);
    EXPECT_EQ(r.devices[0].scenarios[1].buckets, 8);
}

WhatIfResult predictTwoRanks(const std::string& example) {
    const Capture c = loadCaptures({std::string(OSC_SOURCE_DIR) + "/examples/h100/" + example});
    return runWhatIf(c, analyze(c, {}), WhatIfSettings{});
}

TEST(WhatIfH100, TensorParallelCapturesAreNotGradientBuckets) {
    // tp_overlap's reduce-scatters run inside its "forward" ranges, next to
    // all-gathers: the model would re-bucket them as DDP gradients (and its
    // self-check is off by +11%). It says why instead of naming a best size.
    for (const char* tp : {"tp_pipelined", "tp_serial"}) {
        const WhatIfResult r = predictTwoRanks(tp);
        ASSERT_FALSE(r.devices.empty());
        EXPECT_EQ(r.devices[0].collective, "ReduceScatter") << tp;
        EXPECT_EQ(r.devices[0].gradients_in_forward, r.devices[0].gradients) << tp;
        const auto misfit = modelMisfit(r);
        ASSERT_TRUE(misfit.has_value()) << tp;
        EXPECT_NE(misfit->find("inside the forward pass"), std::string::npos) << *misfit;
        EXPECT_EQ(misfit->find('\n'), std::string::npos) << "one line";
    }
}

TEST(WhatIfH100, DataParallelCapturesFit) {
    // The DDP captures launch their all-reduces in the backward pass and
    // replay within a few percent: modelled, no refusal.
    for (const char* ddp : {"ddp_bucketed", "ddp_sequential", "pytorch_ddp", "pytorch_ddp_torch_profiler"}) {
        const WhatIfResult r = predictTwoRanks(ddp);
        ASSERT_FALSE(r.devices.empty());
        EXPECT_TRUE(r.devices[0].modelled) << ddp;
        EXPECT_EQ(r.devices[0].gradients_in_forward, 0) << ddp;
        EXPECT_FALSE(modelMisfit(r).has_value()) << ddp << ": " << modelMisfit(r).value_or("");
    }
}

TEST(WhatIfMisfit, SelfCheckAboveTenPercentIsRefusedNotWarnedOnly) {
    WhatIfResult r;
    DeviceWhatIf d;
    d.modelled = true;
    d.label = "rank 0 device 0";
    d.gradients = 4;
    d.observed.step_ns = 100'000'000;
    d.observed.replayed_step_ns = 109'000'000;
    d.self_check_error = 0.09;
    r.devices.push_back(d);
    EXPECT_FALSE(modelMisfit(r).has_value()) << "9% is warned about, not refused";
    r.devices[0].observed.replayed_step_ns = 88'000'000;
    r.devices[0].self_check_error = -0.12;
    const auto misfit = modelMisfit(r);
    ASSERT_TRUE(misfit.has_value());
    EXPECT_NE(misfit->find("-12.0%"), std::string::npos) << *misfit;
    EXPECT_NE(misfit->find("88.000 ms against 100.000 ms"), std::string::npos) << *misfit;
    // Half or fewer in the forward pass: still gradient buckets.
    r.devices[0].self_check_error = 0.01;
    r.devices[0].gradients_in_forward = 2;
    EXPECT_FALSE(modelMisfit(r).has_value());
    r.devices[0].gradients_in_forward = 3;
    EXPECT_TRUE(modelMisfit(r).has_value());
}

}  // namespace
}  // namespace osc::whatif

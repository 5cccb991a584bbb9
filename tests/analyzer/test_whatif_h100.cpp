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

}  // namespace
}  // namespace osc::whatif

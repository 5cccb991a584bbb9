// `check` gates that neither flake nor lie (issue 42): a threshold that
// could not be measured is skipped with its reason (text and JUnit), or
// fails with --require-busbw; no message holds an empty name; and
// --baseline judges per-step distributions against their noise.
#include "analyzer/report/check.h"
#include "tests/analyzer/noisy_job.h"
#include "tests/analyzer/test_report_fixture.h"
#include "tests/support/occurrences.h"

#include <gtest/gtest.h>

#include <string>

using namespace osc;
using namespace osc::report;
using osc::testsupport::occurrences;

namespace {

const CheckOutcome* find(const std::vector<CheckOutcome>& v, const std::string& scope, const std::string& name) {
    for (const auto& o : v)
        if (o.scope == scope && o.name == name) return &o;
    return nullptr;
}

BusBandwidth measuredLink(double fraction, std::string link) {
    BusBandwidth b;
    b.measured = 6;
    b.peak_busbw_gbps = 450;
    b.link = std::move(link);
    b.median_algbw_gbps = 450 * fraction / 1.75;
    b.median_busbw_gbps = 450 * fraction;
    b.median_busbw_fraction = fraction;
    return b;
}

}  // namespace

// Two ranks sharing one GPU (examples/h100): no link, so no fraction. They
// were "ok: 2 checks passed"; now each says why, and JUnit skips them.
TEST(CheckGates, UnmeasuredBusBandwidthIsSkippedSayingWhy) {
    Analysis a = fixture::twoDeviceAnalysis();
    BusBandwidth shared;
    shared.measured = 10;
    shared.median_algbw_gbps = 1.5;
    shared.median_busbw_gbps = 1.5;
    a.devices[0].busbw = shared;
    a.devices[0].findings.push_back({FindingKind::SharedGpu, "Shares its GPU with rank 1 gpu 1", 0});
    Thresholds t;
    t.minBusBwFraction = 0.9;
    const auto out = runChecks(a, t);
    ASSERT_EQ(out.size(), 2u);
    for (const auto& o : out) {
        EXPECT_TRUE(o.passed);
        EXPECT_TRUE(o.skipped);
    }
    EXPECT_EQ(out[0].message,
              "rank 0 gpu 0: bus bandwidth against the link's peak not measured (it shares its GPU with other ranks, "
              "so its collectives cross no link; --peak-busbw-gbps compares them anyway)");
    EXPECT_EQ(out[1].message,
              "rank 1 gpu 1: bus bandwidth against the link's peak not measured (no collective with bytes and a "
              "transfer time)");
    const std::string xml = formatJunit(out, "overlapscope check");
    EXPECT_NE(xml.find("skipped=\"2\""), std::string::npos) << xml;
    EXPECT_EQ(occurrences(xml, "<skipped message=\"rank "), 2u) << xml;
    EXPECT_NE(xml.find("(it shares its GPU with other ranks"), std::string::npos) << xml;
    EXPECT_EQ(occurrences(xml, "<failure"), 0u);

    // --require-busbw: the same devices fail, saying why.
    t.requireBusBw = true;
    const auto required = runChecks(a, t);
    for (const auto& o : required) {
        EXPECT_FALSE(o.passed);
        EXPECT_FALSE(o.skipped);
        EXPECT_NE(o.message.find("), and --require-busbw asks for it"), std::string::npos) << o.message;
    }
    EXPECT_EQ(occurrences(formatJunit(required, "s"), "<failure"), 2u);

    // A measured device is judged as before; --require-busbw changes nothing there.
    a.devices[0].busbw = measuredLink(0.95, "NVLink 4 (H100 SXM)");
    const auto measured = runChecks(a, t);
    const CheckOutcome* o = find(measured, "rank 0 gpu 0", "min-busbw-fraction");
    ASSERT_TRUE(o);
    EXPECT_TRUE(o->passed);
    EXPECT_FALSE(o->skipped);
    EXPECT_EQ(o->message,
              "rank 0 gpu 0: collectives ran at a median 95.0% of the link's peak bus bandwidth (450 GB/s, NVLink 4 "
              "(H100 SXM)), >= 90.0%");

    Thresholds alone;
    alone.requireBusBw = true;
    alone.minOverlapRatio = 0.5;
    EXPECT_THROW(runChecks(a, alone), std::invalid_argument);
}

// A compute slowdown that could not be measured is skipped too.
TEST(CheckGates, UnmeasuredSlowdownIsSkipped) {
    Thresholds t;
    t.maxComputeSlowdown = 0.05;
    const auto out = runChecks(fixture::oneDeviceAnalysis(), t);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].skipped);
    EXPECT_NE(out[0].message.find("slowdown not measured"), std::string::npos);
}

// No message prints an empty name: a link without one, a late arrival at a
// collective whose type is unknown.
TEST(CheckGates, NoEmptyNames) {
    Analysis a = fixture::oneDeviceAnalysis();
    a.devices[0].busbw = measuredLink(0.5, "");
    StragglerMetrics s;
    s.late_arrivals = 1;
    s.late_ns = s.worst.late_ns = 2'000'000;
    s.worst.number = 3;
    a.devices[0].straggler = s;
    Thresholds t;
    t.minBusBwFraction = 0.6;
    t.maxStragglerDelayMs = 1;
    const auto out = runChecks(a, t);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].message,
              "rank 0 gpu 0: collectives ran at a median 50.0% of the link's peak bus bandwidth (450 GB/s), below the "
              "minimum 60.0%");
    EXPECT_EQ(out[1].message,
              "rank 0 gpu 0: arrived 2.000 ms after the median rank at a collective #3, above the maximum 1.000 ms");
}

// --baseline alone: per device, step time, exposed communication and each
// collective judged against their noise; the worse one fails with its size
// and confidence, the others pass and say so (JUnit).
TEST(CheckGates, BaselineJudgesStepsAgainstTheirNoise) {
    std::mt19937_64 rng(17);
    const Analysis base = test::noisyJob(rng, {});
    test::NoisyRun worse;
    worse.exposedShift = 0.08;
    const Analysis cand = test::noisyJob(rng, worse);
    Thresholds t;
    t.stepRegression = NoiseOptions{};
    const auto out = runChecks(cand, t, &base);
    ASSERT_EQ(out.size(), 8u);  // 2 devices x (step time, exposed, AllReduce, AllGather)
    for (const auto& o : out) {
        const bool exposed = o.name == "step-exposed-comm-regression";
        EXPECT_EQ(o.passed, !exposed) << o.message;
        EXPECT_FALSE(o.skipped);
        if (exposed) {
            EXPECT_NE(o.message.find(": exposed communication +"), std::string::npos) << o.message;
            EXPECT_NE(o.message.find(" at 95 % over 8 comparisons, 50 steps each (median "), std::string::npos)
                << o.message;
            EXPECT_NE(o.message.find("): worse beyond step-to-step noise"), std::string::npos) << o.message;
        }
    }
    EXPECT_TRUE(find(out, "rank 1 gpu 1", "collective-time-regression: AllGather on communicator #1"));

    // The baseline against a run of the same job passes.
    for (const auto& o : runChecks(test::noisyJob(rng, {}), t, &base)) EXPECT_TRUE(o.passed) << o.message;

    // Too few steps fails, saying so; a device missing from the baseline fails.
    test::NoisyRun few;
    few.steps = 4;
    Analysis short_ = test::noisyJob(rng, few);
    short_.devices[1].rank = 5;
    const auto fewOut = runChecks(short_, t, &base);
    ASSERT_EQ(fewOut.size(), 2u);
    EXPECT_EQ(fewOut[0].message,
              "rank 0 gpu 0: step time, exposed communication and collectives: too few steps to tell a change from "
              "noise (50 in the baseline, 4 in the candidate; at least 10 each)");
    EXPECT_FALSE(fewOut[0].passed);
    EXPECT_EQ(fewOut[1].message, "rank 5 gpu 1: not in the baseline report");
    EXPECT_FALSE(fewOut[1].passed);

    // With --max-regression too, both run; the noise options need a baseline.
    t.maxRegressionPercent = 5;
    EXPECT_EQ(runChecks(cand, t, &base).size(), 8u + 3u * 2u);  // and two whole-run figures per device and summary
    EXPECT_THROW(runChecks(cand, t), std::invalid_argument);
    t.stepRegression->confidence = 1.2;
    EXPECT_THROW(runChecks(cand, t, &base), std::invalid_argument);
}

// A collective seen in too few steps is skipped, not failed.
TEST(CheckGates, CollectiveInFewStepsIsSkipped) {
    std::mt19937_64 rng(23);
    Analysis base = test::noisyJob(rng, {});
    const Analysis cand = test::noisyJob(rng, {});
    test::keepCollectiveInFirstSteps(base, "AllGather", 3);
    Thresholds t;
    t.stepRegression = NoiseOptions{};
    const auto out = runChecks(cand, t, &base);
    const CheckOutcome* o = find(out, "rank 0 gpu 0", "collective-time-regression: AllGather on communicator #1");
    ASSERT_TRUE(o);
    EXPECT_TRUE(o->passed);
    EXPECT_TRUE(o->skipped);
    EXPECT_EQ(o->message,
              "rank 0 gpu 0: AllGather on communicator #1: too few steps to tell a change from noise (3 in the "
              "baseline, 50 in the candidate; at least 10 each)");
}

// The per-step comparison against step-to-step noise (step_regression.h) on
// generated runs with known noise and known shifts: how often a run without
// a change is called a regression, how often a 3 % regression is found, and
// the words of docs/metrics.md section 10's worked example.
#include "analyzer/report/report_json.h"
#include "analyzer/report/step_regression.h"
#include "tests/analyzer/noisy_job.h"

#include <gtest/gtest.h>

#include <iostream>
#include <string>

using namespace osc;
using namespace osc::report;

namespace {

const StepComparison* row(const StepComparisons& c, const std::string& device, const std::string& what) {
    for (const auto& r : c.rows)
        if (r.device == device && r.what == what) return &r;
    return nullptr;
}

// One device whose steps take 40 ms each and expose the given times.
Analysis exposedSteps(const std::vector<TimeNs>& exposed) {
    Analysis a;
    DeviceAnalysis d;
    d.rank = 0;
    for (size_t s = 0; s < exposed.size(); ++s) {
        StepAnalysis step;
        step.name = "step " + std::to_string(s);
        step.metrics.window_ns = 40'000'000;
        step.metrics.exposed_comm_ns = exposed[s];
        d.steps.push_back(step);
    }
    a.devices.push_back(d);
    return a;
}

}  // namespace

// Runs of one job without any change, many random pairs: the share of pairs
// in which anything is called a regression stays at most 1 - confidence
// (the confidence is the whole comparison's: 8 rows here, Bonferroni).
TEST(StepRegression, FalseAlarmsStayBelowTheLevel) {
    std::mt19937_64 rng(42);
    for (const auto& [noise, confidence] : std::vector<std::pair<double, double>>{
             {test::kH100MedianNoise, 0.95}, {test::kH100UpperQuartileNoise, 0.95}, {test::kH100MedianNoise, 0.8}}) {
        NoiseOptions o;
        o.confidence = confidence;
        o.minEffectPercent = 0;  // the noise alone decides
        int alarms = 0;
        const int pairs = 250;
        for (int p = 0; p < pairs; ++p) {
            test::NoisyRun run;
            run.robustCv = noise;
            const auto base = test::noisyJob(rng, run);
            const auto cand = test::noisyJob(rng, run);
            const auto c = compareSteps(base, cand, o);
            ASSERT_EQ(c.judged, 8u);
            if (stepRegressed(c, true)) ++alarms;
        }
        std::cout << "noise " << noise * 100 << " %, confidence " << confidence << ": " << alarms << " false alarms in "
                  << pairs << " pairs\n";
        EXPECT_LE(alarms, static_cast<int>((1 - confidence) * pairs)) << noise << " at " << confidence;
    }
}

// A 3 % regression with 50 steps at the H100 captures' noise is found,
// with the default options, in (nearly) every pair, and its size is right.
TEST(StepRegression, ThreePercentFoundWithFiftySteps) {
    std::mt19937_64 rng(3);
    int found = 0, sized = 0;
    const int pairs = 100;
    for (int p = 0; p < pairs; ++p) {
        test::NoisyRun run;
        const auto base = test::noisyJob(rng, run);
        run.shift = 0.03;
        const auto cand = test::noisyJob(rng, run);
        const auto c = compareSteps(base, cand);
        const StepComparison* r = row(c, "rank 0 gpu 0", "exposed communication");
        ASSERT_TRUE(r);
        if (r->verdict == NoiseVerdict::Regression) ++found;
        if (r->shiftPct && r->shiftPct->low <= 3 && 3 <= r->shiftPct->high) ++sized;
    }
    std::cout << "3 % shift, 50 steps: found in " << found << " of " << pairs << " pairs, interval holds 3 % in "
              << sized << "\n";
    EXPECT_GE(found, 95);
    EXPECT_GE(sized, 95);  // the interval holds the true 3 %

    // At the upper quartile of the captures' noise 50 steps are too few to
    // find 3 % every time (the normal-theory power over 8 comparisons is
    // about two in three), but nothing false is said: the interval holds.
    found = sized = 0;
    for (int p = 0; p < pairs; ++p) {
        test::NoisyRun run;
        run.robustCv = test::kH100UpperQuartileNoise;
        const auto base = test::noisyJob(rng, run);
        run.shift = 0.03;
        const auto c = compareSteps(base, test::noisyJob(rng, run));
        const StepComparison* r = row(c, "rank 0 gpu 0", "exposed communication");
        if (r->verdict == NoiseVerdict::Regression) ++found;
        if (r->shiftPct && r->shiftPct->low <= 3 && 3 <= r->shiftPct->high) ++sized;
    }
    std::cout << "at 4.5 % noise: found in " << found << ", interval holds 3 % in " << sized << "\n";
    EXPECT_GE(found, 40);
    EXPECT_GE(sized, 95);
}

// A change smaller than the minimum effect is said, but not a regression;
// an improvement likewise.
TEST(StepRegression, MinimumEffectAndImprovement) {
    std::mt19937_64 rng(5);
    test::NoisyRun run;
    run.steps = 200;
    run.robustCv = 0.005;
    const auto base = test::noisyJob(rng, run);
    run.shift = 0.005;  // certain at this noise, but under 1 %
    auto c = compareSteps(base, test::noisyJob(rng, run));
    EXPECT_EQ(row(c, "rank 1 gpu 1", "step time")->verdict, NoiseVerdict::BelowMinimumEffect);
    EXPECT_FALSE(stepRegressed(c, true));
    run.shift = -0.05;
    c = compareSteps(base, test::noisyJob(rng, run));
    EXPECT_EQ(row(c, "rank 1 gpu 1", "AllGather on communicator #1")->verdict, NoiseVerdict::Improvement);
    EXPECT_FALSE(stepRegressed(c, true));
}

// docs/metrics.md section 10, Example 11: six steps, two comparisons.
TEST(StepRegression, WorkedExample) {
    const auto base = exposedSteps({10'000'000, 10'400'000, 9'800'000, 10'200'000, 10'600'000, 10'100'000});
    const auto cand = exposedSteps({10'600'000, 10'900'000, 10'500'000, 11'200'000, 10'700'000, 11'000'000});
    NoiseOptions o;
    o.minSteps = 6;
    const auto c = compareSteps(base, cand, o);
    ASSERT_EQ(c.rows.size(), 2u);
    EXPECT_EQ(c.judged, 2u);
    EXPECT_EQ(c.rows[1].sentence,
              "exposed communication +5.9 % [+1.0, +10.8] at 95 % over 2 comparisons, 6 steps each (median "
              "10.150 ms -> 10.800 ms): worse beyond step-to-step noise");
    EXPECT_EQ(c.rows[1].verdict, NoiseVerdict::Regression);
    EXPECT_DOUBLE_EQ(c.rows[1].level, 0.975);
    EXPECT_EQ(c.rows[0].sentence,
              "step time +0.0 % [+0.0, +0.0] at 95 % over 2 comparisons, 6 steps each (median 40.000 ms -> "
              "40.000 ms): within step-to-step noise");
}

TEST(StepRegression, TooFewStepsIsSaidAndFailsTheDevice) {
    std::mt19937_64 rng(9);
    test::NoisyRun run;
    run.steps = 12;
    const auto base = test::noisyJob(rng, run);
    run.steps = 5;
    const auto cand = test::noisyJob(rng, run);
    const auto c = compareSteps(base, cand);
    ASSERT_EQ(c.rows.size(), 2u);  // one per device, nothing judged
    EXPECT_EQ(c.judged, 0u);
    EXPECT_EQ(c.rows[0].metric, StepMetric::Steps);
    EXPECT_EQ(c.rows[0].sentence,
              "step time, exposed communication and collectives: too few steps to tell a change from noise (12 in "
              "the baseline, 5 in the candidate; at least 10 each)");
    EXPECT_TRUE(stepRegressed(c, true));
    EXPECT_FALSE(stepRegressed(c, false));

    // No steps at all: the step pattern is named.
    const auto none = compareSteps(exposedSteps({}), exposedSteps({}));
    ASSERT_EQ(none.rows.size(), 1u);
    EXPECT_NE(none.rows[0].sentence.find("no step ranges were found: --step-pattern"), std::string::npos)
        << none.rows[0].sentence;
}

// A collective seen in too few steps, or in one run only, is said but does
// not fail the run: the step time and exposed communication still judge it.
TEST(StepRegression, CollectivesInFewStepsOrOneRunAreNotTheRunsFault) {
    std::mt19937_64 rng(13);
    test::NoisyRun run;
    run.withAllGather = false;
    auto base = test::noisyJob(rng, run);
    run.withAllGather = true;
    auto cand = test::noisyJob(rng, run);
    auto c = compareSteps(base, cand);
    EXPECT_EQ(c.notes,
              (std::vector<std::string>{"rank 0 gpu 0: AllGather on communicator #1 is only in the candidate",
                                        "rank 1 gpu 1: AllGather on communicator #1 is only in the candidate"}));
    EXPECT_EQ(c.judged, 6u);
    // The AllGather in 4 of the baseline's steps only.
    base = cand;
    test::keepCollectiveInFirstSteps(base, "AllGather", 4);
    c = compareSteps(base, cand);
    const StepComparison* r = row(c, "rank 0 gpu 0", "AllGather on communicator #1");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->verdict, NoiseVerdict::TooFewSteps);
    EXPECT_EQ(r->baseSteps, 4u);
    EXPECT_FALSE(notJudgedFails(*r));
    EXPECT_FALSE(stepRegressed(c, true));
}

// Communicators are matched by their order of first use: their hashes
// differ between the runs (noisyJob draws new ones), yet nothing is left
// unmatched and a device missing from one run is noted.
TEST(StepRegression, CommunicatorsAndDevicesMatchAcrossRuns) {
    std::mt19937_64 rng(21);
    const auto base = test::noisyJob(rng, {});
    auto cand = test::noisyJob(rng, {});
    ASSERT_NE(base.devices[0].collectives[0].commHash, cand.devices[0].collectives[0].commHash);
    auto c = compareSteps(base, cand);
    EXPECT_TRUE(c.notes.empty());
    EXPECT_TRUE(row(c, "rank 1 gpu 1", "AllReduce on communicator #0"));
    EXPECT_TRUE(row(c, "rank 1 gpu 1", "AllGather on communicator #1"));
    cand.devices.pop_back();
    c = compareSteps(base, cand);
    EXPECT_EQ(c.notes, std::vector<std::string>{"rank 1 gpu 1 is only in the baseline"});
    EXPECT_EQ(c.judged, 4u);
}

// Exposed communication that was fully hidden in the baseline: no
// percentage of 0, the shift in ms per step.
TEST(StepRegression, FromNothingHiddenTheShiftIsInMilliseconds) {
    const auto base = exposedSteps(std::vector<TimeNs>(10, 0));
    std::vector<TimeNs> exposed;
    for (int s = 0; s < 10; ++s) exposed.push_back(500'000 + 10'000 * s);
    const auto c = compareSteps(base, exposedSteps(exposed));
    const StepComparison* r = row(c, "rank 0 gpu 0", "exposed communication");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->shiftPct);
    EXPECT_EQ(r->verdict, NoiseVerdict::Regression);
    EXPECT_EQ(r->sentence.substr(0, 54), "exposed communication +0.545 ms [+0.520, +0.570] per s");
}

// A saved report (any version so far) holds what the comparison needs: the
// steps and each collective's step. Read back, it compares as the analysis.
TEST(StepRegression, SavedReportsCompareAsTheAnalysis) {
    std::mt19937_64 rng(8);
    const auto base = test::noisyJob(rng, {});
    test::NoisyRun run;
    run.exposedShift = 0.1;
    const auto cand = test::noisyJob(rng, run);
    const auto saved = parseReportJson(formatJsonReport(base, ReportOptions{}), "base.json").analysis;
    const auto direct = compareSteps(base, cand), read = compareSteps(saved, cand);
    ASSERT_EQ(direct.rows.size(), read.rows.size());
    for (size_t i = 0; i < direct.rows.size(); ++i) EXPECT_EQ(direct.rows[i].sentence, read.rows[i].sentence);
    EXPECT_TRUE(stepRegressed(read, true));
}

TEST(StepRegression, OptionsAreChecked) {
    const auto a = exposedSteps({1, 2, 3});
    for (const auto& bad :
         {NoiseOptions{1.0, 1, 10}, NoiseOptions{0.3, 1, 10}, NoiseOptions{0.95, -1, 10}, NoiseOptions{0.95, 1, 1}})
        EXPECT_THROW(compareSteps(a, a, bad), std::invalid_argument);
}

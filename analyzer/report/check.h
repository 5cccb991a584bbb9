// `overlapscope check`: CI thresholds over an analysis, each evaluated per
// device and (where it makes sense) for the summary over all devices.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/step_regression.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::report {

struct Thresholds {
    std::optional<double> minOverlapRatio;      // overlap_ratio >= this
    std::optional<double> maxExposedCommMs;     // exposed_comm_ns <= this * 1e6 (per device only)
    std::optional<double> maxExposedCommShare;  // exposed_comm_ns / window_ns <= this
    // With a baseline: overlap_ratio >= base * (1 - P/100) and
    // exposed_comm_ns <= base * (1 + P/100).
    std::optional<double> maxRegressionPercent;
    // With a baseline: step times, exposed communication per step and each
    // collective's time per step judged against their step-to-step noise
    // (step_regression.h); a device with too few steps fails.
    std::optional<NoiseOptions> stepRegression;
    // docs/design.md 4b/4c, per device: compute_slowdown <= R; exposed_transfer_ns
    // (exposed_comm_ns with one device) <= X ms; delay_caused_ns <= X ms.
    std::optional<double> maxComputeSlowdown, maxExposedTransferMs, maxDelayCausedMs;
    // docs/metrics.md 7e/7f: a pipeline stage's bubble share over its steps
    // (per device, and the summary) <= R; every step's all-to-all imbalance
    // (bytes when known, else transfer time; max / mean over ranks) <= R.
    std::optional<double> maxBubbleShare, maxAllToAllImbalance;
    // docs/design.md 4d, per device: the median bus bandwidth of its
    // collectives over its link's peak >= R; its worst late arrival at a
    // collective (against the median rank) <= X ms.
    std::optional<double> minBusBwFraction, maxStragglerDelayMs;
    // A device without a measured fraction fails --min-busbw-fraction
    // instead of being skipped.
    bool requireBusBw = false;
    // A capture that lost records undercounts GPU activity: by default each
    // device whose capture dropped records fails ("dropped-records").
    bool allowDropped = false;

    bool any() const {
        return minOverlapRatio || maxExposedCommMs || maxExposedCommShare || maxRegressionPercent || stepRegression ||
               maxComputeSlowdown || maxExposedTransferMs || maxDelayCausedMs || maxBubbleShare ||
               maxAllToAllImbalance || minBusBwFraction || maxStragglerDelayMs;
    }
};

struct CheckOutcome {
    std::string scope;  // "rank 0 gpu 0" or "summary"
    std::string name;   // "min-overlap-ratio", "max-exposed-comm-ms", ...
    bool passed = true;
    // Passed without being evaluated: the value it needs was not measured
    // (the message says why); JUnit's <skipped>, a "SKIP" line in the text.
    bool skipped = false;
    std::string message;  // one line: scope, value, threshold
};

// Throws std::invalid_argument when no threshold is set, a threshold is out
// of range, or --max-regression comes without a baseline (or the reverse).
std::vector<CheckOutcome> runChecks(const Analysis& current, const Thresholds& thresholds,
                                    const Analysis* baseline = nullptr);

// JUnit XML: one <testcase> per outcome, classname = scope; a skipped one
// holds <skipped message="why"/>.
std::string formatJunit(const std::vector<CheckOutcome>& outcomes, const std::string& suiteName);

}  // namespace osc::report

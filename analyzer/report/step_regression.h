// Regressions judged against the noise the steps themselves show
// (docs/metrics.md section 10): per device, the step times, the exposed
// communication per step and each collective's time per step (per
// collective type and communicator) of a baseline and a candidate run, each
// compared as two samples by shiftInterval. `check --baseline` gates on the
// result, `diff` shows it (and gates with --fail-on-step-regression); the
// Python module can call compareSteps directly.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/shift_interval.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::report {

// Changes of a time below this per step (or, in `diff`'s whole-run
// figures, in all) never count as regressions: timer noise on a fully
// hidden run would be an infinite percentage.
inline constexpr double kSmallestRegressionNs = 1000;

struct NoiseOptions {
    // Of the comparison as a whole: with T rows judged, each interval is at
    // 1 - (1 - confidence) / T (Bonferroni), so the chance that any row of a
    // run without a change says "regression" stays below 1 - confidence.
    double confidence = 0.95;
    // A shift smaller than this (percent of the baseline's median; never
    // less than 1 µs per step) is not a regression, however certain.
    double minEffectPercent = 1.0;
    // Fewer steps on either side: too few to tell a change from noise.
    size_t minSteps = 10;
};

// Throws std::invalid_argument naming the option (--confidence, --min-effect, --min-steps).
void validateNoiseOptions(const NoiseOptions& options);

enum class NoiseVerdict {
    Regression,          // worse beyond the noise, by at least the minimum effect
    Improvement,         // better beyond the noise, by at least the minimum effect
    BelowMinimumEffect,  // a change beyond the noise, but smaller than the minimum effect
    WithinNoise,         // the interval holds no change
    TooFewSteps,         // not judged
};

enum class StepMetric {
    Steps,        // the device as a whole: too few steps for any of the others
    StepTime,     // steps[].window_ns
    ExposedComm,  // steps[].exposed_comm_ns
    Collective,   // per step, the summed duration of one collective type on one communicator
};

struct StepComparison {
    std::string device;  // "rank 0 gpu 0"
    int baseDevice = -1, candidateDevice = -1;
    StepMetric metric = StepMetric::Steps;
    std::string what;  // "step time", "exposed communication", "AllReduce on communicator #0"
    // Collective rows: the type (or kernel name when unknown) and the
    // communicator, numbered by first use on the device (hashes change
    // from run to run); -1 when the capture names none.
    std::string collective;
    int communicator = -1;
    size_t baseSteps = 0, candidateSteps = 0;
    std::optional<double> baseMedianNs, candidateMedianNs;
    std::optional<ShiftInterval> shiftNs;   // candidate - base, ns per step
    std::optional<ShiftInterval> shiftPct;  // in percent of the base median; null when that is 0
    double level = 0;                       // this row's interval confidence (Bonferroni)
    NoiseVerdict verdict = NoiseVerdict::TooFewSteps;
    // "exposed communication +4.1 % [+2.9, +5.4] at 95 %, 40 steps each: worse beyond step-to-step noise"
    std::string sentence;
};

struct StepComparisons {
    NoiseOptions options;
    size_t judged = 0;                 // rows with enough steps on both sides
    std::vector<StepComparison> rows;  // device by device (rank, GPU), then step time, exposed, collectives
    std::vector<std::string> notes;    // devices and collectives in one run only
};

StepComparisons compareSteps(const Analysis& base, const Analysis& candidate, const NoiseOptions& options = {});

// True when a row is a regression; with `tooFewFails`, also when a device
// has too few steps or its step time or exposed communication could not be
// judged (a collective seen in too few steps is not the job's fault).
bool stepRegressed(const StepComparisons& comparisons, bool tooFewFails);
// Whether a row that was not judged counts against the run (see above).
bool notJudgedFails(const StepComparison& row);

std::string toString(NoiseVerdict verdict);  // "regression", "improvement", ...
std::string toString(StepMetric metric);     // "steps", "step_time", "exposed_comm", "collective"

}  // namespace osc::report

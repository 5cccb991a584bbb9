// `overlapscope diff`: two analyses side by side (the summary, each device
// matched by rank and GPU, each step matched by position), with absolute and
// relative change, ordered so the largest regressions come first.
//
// A regression is a worsening of the two gated metrics, in percent of the
// base value (the same rule as `check --baseline --max-regression`):
//   overlap_ratio:   (base - candidate) / base * 100      (lower is worse)
//   exposed_comm_ns: (candidate - base) / base * 100      (higher is worse)
// Changes of exposed communication under 1 µs never count (timer noise on an
// otherwise fully hidden run would be an infinite percentage).
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/step_regression.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::report {

struct MetricDelta {
    std::string name;  // "overlap_ratio", "exposed_comm_ns", ...
    std::optional<double> base, candidate;
    std::optional<double> change;         // candidate - base
    std::optional<double> relativePct;    // change / |base| * 100
    std::optional<double> regressionPct;  // > 0 when worse; only for the gated metrics
};

enum class DiffScope { Summary, Device, Step };

struct DiffRow {
    DiffScope scope = DiffScope::Summary;
    std::string label;  // "summary", "rank 0 gpu 1", "rank 0 gpu 1 step 3 (ProfilerStep#3)"
    int rank = -1;
    uint32_t device = 0;
    int step = -1;
    // Device and step rows: the paired devices' indices into each side's
    // Analysis::devices, so a viewer can show both runs' own rows.
    int baseDevice = -1, candidateDevice = -1;
    std::vector<MetricDelta> metrics;
    double worstRegressionPct = 0;  // max regressionPct of the row, 0 when none
};

struct DiffResult {
    std::string basePath, candidatePath;
    std::vector<DiffRow> rows;       // summary, then devices, then steps; each group worst first
    std::vector<std::string> notes;  // devices or steps present on one side only
    double worstRegressionPct = 0;   // over the summary and device rows
    // Per-step distributions against their noise (step_regression.h): what
    // --fail-on-step-regression gates on.
    StepComparisons steps;
};

// Throws std::invalid_argument for bad noise options.
DiffResult diffAnalyses(const Analysis& base, const Analysis& candidate, const NoiseOptions& noise = {});

// True when a summary or device row regresses by more than `percent`.
bool exceedsRegression(const DiffResult& diff, double percent);

std::string formatDiffText(const DiffResult& diff, std::optional<double> failPercent);
std::string formatDiffMarkdown(const DiffResult& diff, std::optional<double> failPercent);
std::string formatDiffJson(const DiffResult& diff, std::optional<double> failPercent);

}  // namespace osc::report

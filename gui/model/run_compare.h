// Two runs side by side (issue 30 item 1): a base and a candidate analysis,
// their steps paired by index (step N of a device with step N of the same
// device in the other run) and their collectives paired by position inside
// the step (the k-th collective of step N with the k-th of step N), with the
// change of each number. No Qt, no painting.
//
// Devices and steps are paired and their changes computed by the analyzer's
// `overlapscope diff` (analyzer/report/diff.h), so the window and `diff`
// cannot disagree; collectives, which `diff` does not compare, are paired
// here the same way (per paired device, by step index).
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/diff.h"
#include "gui/model/column_units.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osc::gui {

// One step of a device present in both runs.
struct StepPair {
    int baseDevice = -1, candidateDevice = -1;  // into each Analysis::devices
    int step = -1;                              // the same index on both sides
    size_t diffRow = 0;                         // into RunComparison::diff.rows (a Step row)
};

// One collective, or a collective present in one run only (its other index -1).
struct CollectivePair {
    int baseDevice = -1, candidateDevice = -1;          // into each Analysis::devices (both set)
    int step = -1;                                      // step index on both sides; -1 outside steps
    int position = 0;                                   // k-th collective of that step on the device
    int baseCollective = -1, candidateCollective = -1;  // into DeviceAnalysis::collectives
    // candidate - base, when both sides have the collective.
    std::optional<TimeNs> durationChange, overlappedChange, exposedChange;
};

struct RunComparison {
    report::DiffResult diff;                  // summary, device and step rows (worst first), notes
    std::vector<StepPair> steps;              // device by device (base order), step by step
    std::vector<CollectivePair> collectives;  // device by device, step by step, in start order
    std::vector<std::string> notes;           // the diff's notes, then the collectives' ones
};

RunComparison compareRuns(const Analysis& base, const Analysis& candidate);

// A metric of a diff row by its report name ("exposed_comm_ns"), or nullptr.
const report::MetricDelta* findMetric(const report::DiffRow& row, std::string_view name);

// "+40.000 µs (+12.5 %)", "−0.500 ms (−3.0 %)": a time change in its
// column's unit, with its share of the base when known and not zero; "0"
// for no change at all.
std::string changeText(TimeNs change, const ColumnUnit& unit, std::optional<double> relativePct = std::nullopt);

// "+50.0 pts": the change of a ratio (0..1) in percentage points.
std::string pointsText(double change);

// The one-line summary of a comparison, base → candidate, over all devices
// (the diff's summary row, as `report` sums them): exposed communication,
// hidden share and window.
std::string summaryText(const RunComparison& c);

}  // namespace osc::gui

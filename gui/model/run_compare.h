// Two runs side by side (issue 30 item 1): a base and a candidate analysis,
// their steps paired by index (step N of a device with step N of the same
// device in the other run) and their collectives paired inside the step by
// what they are (issue 40 item 5): the same collective type on the same
// group of ranks, of the same size, and the same bucket (the k-th of those
// in the step), with the change of each number. A collective the other run
// has no such partner for is listed alone. No Qt, no painting.
//
// Devices and steps are paired and their changes computed by the analyzer's
// `overlapscope diff` (analyzer/report/diff.h), so the window and `diff`
// cannot disagree; collectives, which `diff` does not compare, are paired
// here (per paired device, inside each paired step).
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
// Its identity, what pairs it: collective type, group, bytes and bucket.
// The group is the ranks that ran its communicator ("ranks 0–3"; NCCL's
// communicator hash is new in every run), "" when the capture names no
// communicator; the bucket is its place among the step's collectives of the
// same type, group and size (from 0): a DDP bucket, or the sequence number
// counted from the step (NCCL's own counts from the communicator's creation,
// which differs between runs that ran more or fewer collectives before).
struct CollectivePair {
    int baseDevice = -1, candidateDevice = -1;          // into each Analysis::devices (both set)
    int step = -1;                                      // step index on both sides; -1 outside steps
    std::string group;                                  // "ranks 0–3", "" unknown
    int bucket = 0;                                     // k-th of its type, group and size in the step
    int baseCollective = -1, candidateCollective = -1;  // into DeviceAnalysis::collectives
    // candidate - base, when both sides have the collective.
    std::optional<TimeNs> durationChange, overlappedChange, exposedChange;
};

struct RunComparison {
    report::DiffResult diff;      // summary, device and step rows (worst first), notes
    std::vector<StepPair> steps;  // device by device (base order), step by step
    // Device by device, step by step: A's in start order with their partners,
    // then those only B has, in B's start order.
    std::vector<CollectivePair> collectives;
    size_t collectivesPaired = 0, onlyInBase = 0, onlyInCandidate = 0;
    std::vector<std::string> notes;  // the diff's notes, then the collectives' ones
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

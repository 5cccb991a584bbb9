// What the cross-rank engine decides for one device, and how that lands in an
// in-memory DeviceAnalysis. The partial results' merge puts the same values
// into a device's saved report object instead (analyzer/partial/device_json.h).
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>
#include <vector>

namespace osc::crossrank {

// docs/design.md 4d for one operation (CollectiveInstance's fields of the
// same names).
struct OpBandwidth {
    std::optional<double> algbw_gbps, busbw_gbps, busbw_fraction;
    BusBwBasis basis = BusBwBasis::None;
};

struct DeviceCrossRank {
    // Added to every time of the device: its origin on the job's timeline
    // plus, with --align collectives, its process's clock shift.
    TimeNs shift = 0;
    // Only the origin: finding messages name times as the device's own
    // timeline had them before --align collectives.
    TimeNs messageShift = 0;
    // docs/design.md 4c, absent with one device: the device's and each
    // step's (by position), and where exposed waiting happened, (Wt ∖ Tr) ∖ C,
    // on the job's timeline.
    std::optional<WaitTransferMetrics> wait;
    std::vector<WaitTransferMetrics> stepWait;
    IntervalSet exposedWait;
    std::optional<int> lastArrivals;
    std::optional<TimeNs> delayCaused;
    std::optional<TimeNs> clockShift;  // with --align collectives
    // The engine's shell of the device: its pipeline and all-to-all results
    // (totals and per step, by position) and the findings they add. The
    // shell lives in the engine's rest(); null for a device without any.
    const DeviceAnalysis* patterns = nullptr;
    // docs/design.md 4d: per operation, over the device, and when it
    // arrived last at a collective, why.
    std::vector<OpBandwidth> bandwidth;
    std::optional<BusBandwidth> busbw;
    std::optional<StragglerMetrics> straggler;
    // Findings of the engine's own (bandwidth or schedule limit, straggler):
    // the device's, and per step by position.
    std::vector<Finding> findings;
    std::vector<std::vector<Finding>> stepFindings;
};

// Moves every time of the device (steps, operations, exposed waiting) by `by`.
void shiftDeviceTimes(DeviceAnalysis& device, TimeNs by);

// The idle-gap finding names where its largest gap starts ("at 1.250 ms)");
// `at` is that time as the message has it: the message then names at + by.
void moveIdleGapMessage(Finding& finding, TimeNs at, TimeNs by);

// The shell's findings, then the engine's own, added as the metrics add
// them (addFinding, in order), and on a pipeline stage the pipeline's note
// on idle gaps and communication-bound verdicts.
void addCrossRankFindings(std::vector<Finding>& findings, const std::vector<Finding>& patterns,
                          const std::vector<Finding>& engine, bool pipelineStage);

// Puts the engine's decisions into a device analysed in memory: its times
// moved, waiting versus transfer, last arrivals, the pipeline and
// all-to-all results, bus bandwidth, the straggler and their findings.
void applyCrossRank(DeviceAnalysis& device, const DeviceCrossRank& cross);

}  // namespace osc::crossrank

// Where a pipeline stage had no compute (docs/metrics.md section 7e), as
// intervals the timeline can shade. The analyzer's measurePipelineStage gives
// a stage's bubble in a pipeline step as three lengths (fill, drain, stall)
// from the step's window and the stage's compute C, which the GUI already
// holds (DeviceCoverage::compute); the intervals are where those lie.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

enum class BubblePart : uint8_t {
    Fill,   // before the stage's first compute in the window: the pipeline filling
    Drain,  // after its last compute: the pipeline draining
    Stall,  // between its computes: waiting for a neighbour stage
};
const char* bubblePartName(BubblePart part);

// One pipeline step as this stage saw it.
struct StageBubbleStep {
    std::string step;  // step name; "" = the whole capture (no step ranges)
    int stage = 0, stages = 0, microbatches = 0;
    bool slowest = false;  // the stage the analyzer names as the slowest
    Interval window;       // the pipeline window P, the same for every stage
    // measurePipelineStage's numbers: bubble = fill + drain + stall, its share of the window.
    TimeNs fill_ns = 0, drain_ns = 0, stall_ns = 0, bubble_ns = 0;
    double share = 0;
    std::optional<double> theory;  // (S-1)/(M+S-1)
};

struct BubbleInterval {
    TimeNs start = 0, end = 0;
    BubblePart part = BubblePart::Stall;
    int step = 0;  // into StageBubbles::steps
};

struct StageBubbles {
    std::vector<StageBubbleStep> steps;
    // Start-sorted and disjoint: a later step's window that would overlap
    // an earlier one's starts where the earlier one ends.
    std::vector<BubbleInterval> intervals;

    bool empty() const { return intervals.empty(); }
    // Index of the first interval ending after t (intervals.size() when none).
    size_t firstEndingAfter(TimeNs t) const;
    // The interval holding t, or nullptr.
    const BubbleInterval* at(TimeNs t) const;
};

// The bubbles of Analysis::devices[device] in every pipeline step it is a
// stage of (Analysis::pipeline); `compute` is that device's C, in the same
// clock as the analysis.
StageBubbles stageBubbles(const Analysis& analysis, int device, const IntervalSet& compute);

// The tooltip over a shaded interval: which part, its length, and the
// step's bubble share against the theoretical (S-1)/(M+S-1).
std::string bubbleText(const StageBubbles& bubbles, const BubbleInterval& interval);

}  // namespace osc::gui

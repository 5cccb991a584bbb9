// Pipeline parallelism (docs/metrics.md section 7e): per step and stage, the
// bubble (time in the pipeline window with no compute on the stage) against
// the theoretical (S-1)/(M+S-1), the slowest stage, and a finding when a
// stage idles more than fill and drain explain.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/step_keys.h"

#include <vector>

namespace osc {

// In three phases, for a caller that holds one device's compute at a time
// (analyzer/crossrank's engine): the windows from every device's
// micro-batches (in the devices' final clocks), each stage measured against
// its window, then the results: Analysis::pipeline, StepAnalysis::pipeline,
// DeviceAnalysis::pipeline and the PipelineBubble findings.
struct PipelinePlan {
    struct Stage {
        int device = -1;
        int step = -1;  // the device's step, -1 outside steps
    };
    struct Window {
        StepKey key;
        PipelineStep step;          // window, shape and theory (stage devices and slowest come with the results)
        std::vector<Stage> stages;  // in device order
    };
    std::vector<Window> windows;  // in StepKey order
};
// `microbatchesOf[d]`: device d's DeviceIntervals::microbatches, or nullptr.
// Reads the devices' steps (their keys) and the settings of `a`.
PipelinePlan planPipeline(const Analysis& a,
                          const std::vector<const std::vector<DeviceIntervals::MicroBatches>*>& microbatchesOf);

struct PipelineStageMeasure {
    TimeNs firstCompute = 0;  // the stage's first compute in the window (the window's end without any)
    PipelineStageMetrics m;   // window, compute, bubble, fill, drain, stall, bubble share
};
// One stage's compute C (start-sorted, disjoint) against its window.
PipelineStageMeasure measurePipelineStage(const IntervalSet& compute, Interval window);

// On a pipeline stage, long idle stretches during fill and drain are the
// bubble, not the host: appends that to the idle-gap and communication-bound
// findings that do not mention the pipeline yet.
void notePipelineInFindings(std::vector<Finding>& findings);

// measured[w][s] is stage s of plan.windows[w]. Resets and fills the
// results named above.
void finishPipeline(Analysis& a, const PipelinePlan& plan,
                    const std::vector<std::vector<PipelineStageMeasure>>& measured);

}  // namespace osc

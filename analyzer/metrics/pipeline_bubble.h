// Pipeline parallelism (docs/metrics.md section 7e): per step and stage, the
// bubble (time in the pipeline window with no compute on the stage) against
// the theoretical (S-1)/(M+S-1), the slowest stage, and a finding when a
// stage idles more than fill and drain explain.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <vector>

namespace osc {

// Needs intervalsOfDevice[d].microbatches and .compute (analyzeProcesses) in
// the devices' final clocks. Fills Analysis::pipeline, StepAnalysis::pipeline,
// DeviceAnalysis::pipeline and the PipelineBubble findings.
void analyzePipeline(Analysis& a, const std::vector<DeviceIntervals>& intervalsOfDevice);

}  // namespace osc

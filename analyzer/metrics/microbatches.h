// Micro-batch ranges of pipeline parallelism (docs/metrics.md section 7e):
// NVTX / annotation ranges named like `fwd mb 3` / `bwd mb 3`, projected onto
// a device like steps, and summarised per device step for the bubble.
#pragma once

#include "analyzer/metrics/steps.h"

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace osc {

// Throws std::invalid_argument when the pattern is not a regex or has fewer
// than two groups (the phase and the number).
std::regex compileMicrobatchPattern(const std::string& pattern);

// The micro-batch ranges of one process, parsed once.
class MicroBatchRanges {
public:
    MicroBatchRanges(const Capture& capture, const Process& process, const std::regex& pattern,
                     std::vector<int8_t>& matches);

    bool empty() const { return forward_.empty(); }

    // Per device step (index into `steps`, -1 outside them) that ran
    // micro-batch compute: distinct forward / backward numbers and the span
    // of the compute kernels the ranges launched (CPU ranges, through their
    // correlation ids) or that started inside them (GPU-side ranges). A
    // range belongs to the step whose window holds its first compute kernel.
    std::vector<DeviceIntervals::MicroBatches> onDevice(const Device& device, ActivityClassifier& classifier,
                                                        const std::vector<StepAnalysis>& steps) const;

private:
    StepProjector projector_;
    std::vector<int8_t> forward_;  // per range: 1 forward, 0 backward, -1 not a micro-batch
    std::vector<int64_t> number_;
};

}  // namespace osc

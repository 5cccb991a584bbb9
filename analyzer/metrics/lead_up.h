// docs/design.md 4d, why a rank was late, the part one device decides: for
// each communication operation launched in a step, what the GPU did from the
// start of the step's lead-up until the operation began (compute, idle), and
// which kernels and which host activity filled that time. The cross-rank half
// compares a late rank's lead-up with the median rank's.
#pragma once

#include "analyzer/metrics/coverage.h"

#include <vector>

namespace osc {

// Where a step's lead-up starts: the end of the GPU's last activity before
// the step's first work, so that the idle stretch in which the GPU waited for
// the host to begin the step (data loading, say) belongs to it; the step's
// window start when something still ran right before it, or nothing did.
TimeNs leadUpStart(const DeviceCoverage& coverage, TimeNs windowStart);

// Fills intervals.leadUps, leadUpIncrements and leadUpNames for the device's
// operations (their `step` set). Host activity is every runtime or driver
// call, CPU operator and NVTX range of the process that is not a step
// (`stepNameMatches[name] == 1`) and not on the GPU; an idle instant goes to
// the one of them covering it that started last (the innermost; ties: the
// shorter, then the name), idle time no range covers to the name "".
void computeLeadUps(const Capture& capture, const Process& process, const Device& device,
                    ActivityClassifier& classifier, const DeviceCoverage& coverage,
                    const std::vector<StepAnalysis>& steps, const std::vector<CollectiveInstance>& ops,
                    const std::vector<int8_t>& stepNameMatches, DeviceIntervals& intervals);

}  // namespace osc

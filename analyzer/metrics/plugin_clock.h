// The NCCL profiler plugin times a collective with the GPU's global timer
// (`%globaltimer`, through NCCL's kernel-channel events); CUPTI times kernels
// on the host clock. The two disagree by a constant: 0.77 ms on the H100 of
// docs/measurements.md, enough to pin each plugin row on the kernel before its
// own. This finds that constant from the rows and kernels themselves.
#pragma once

#include "analyzer/capture/model.h"

#include <vector>

namespace osc {

struct TimedSpan {
    TimeNs start = 0, end = 0;
};

// The offset to add to the rows' times so that they line up with kernels:
// the shift under which the most rows land on a kernel of the same duration
// starting at the same time (within max(10 us, 5% of the duration)), refined to
// the median of those pairs' start differences. 0 when no shift matches more
// rows than no shift does. `rows` and `kernels` sorted by start; rows with
// an unknown end (end < start) are ignored.
TimeNs pluginClockOffset(const std::vector<TimedSpan>& rows, const std::vector<TimedSpan>& kernels);

// The kernel (index into `kernels`, sorted by start) whose start is nearest
// `start` within that tolerance and whose duration matches; -1 when none.
long kernelMatchingRow(const std::vector<TimedSpan>& kernels, TimeNs start, TimeNs duration);

// The kernel whose start is nearest `start` within the same tolerance, of any
// duration; -1 when none. For a row moved by the offset that matches no
// kernel of its duration and starts in none: the offset is a median, so a
// row may land a few hundred ns before its kernel, and the kernel of a group
// NCCL fused (a pipeline's send with the next receive) lasts longer than
// either row's own channels (H200, docs/measurements.md).
long kernelStartingNear(const std::vector<TimedSpan>& kernels, TimeNs start, TimeNs duration);

}  // namespace osc

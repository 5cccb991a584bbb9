// One training step as the what-if model sees it: the gradient collectives
// (one per DDP bucket), when their gradients became ready, and everything
// else on the device, split into work that keeps its time and the work after
// the last gradient collective (the optimizer) that moves with it.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/intervals.h"

#include <limits>
#include <string>
#include <vector>

namespace osc::whatif {

// One compute kernel of the step, for the readiness rule.
struct ComputeKernel {
    TimeNs start = 0, end = 0;
    TimeNs launch = -1;     // host API call start; -1 when the capture has none
    uint32_t name = kNoId;  // StringTable id (the signature readiness points share)
};

// One gradient collective as observed: a DDP bucket.
struct ObservedBucket {
    TimeNs start = 0, end = 0;  // first start, last end of its operations
    TimeNs launch = -1;         // host launch of its first operation, -1 unknown
    uint64_t bytes = 0;
    TimeNs costNs = 0;  // what the cost fit sees: duration, or transfer time (docs/design.md 4c)
    TimeNs ready = 0;   // when its gradients were ready (set by the readiness rule)
    bool readyKnown = false;
    uint32_t readyName = kNoId;  // the compute kernel whose end made it ready
};

// A gradient-ready point: the end of a backward compute kernel and the
// gradient bytes ready by then (cumulative from the backward pass's start).
struct ReadyPoint {
    TimeNs time = 0;
    double bytes = 0;
};

struct StepModel {
    int stepIndex = -1;  // into DeviceAnalysis::steps
    std::string name;
    TimeNs start = 0, end = 0;     // observed GPU window
    TimeNs measuredExposedNs = 0;  // docs/design.md section 4 exposed_comm_ns of the step
    // The work that keeps its time and the work launched after the last
    // gradient collective (which moves with it), kept as the busy time the
    // evaluation reads: merged compute and communication, and the extremes
    // of every category. One entry a kernel for every rank's steps at once
    // was the What-if panel's largest cost at 1,024 ranks.
    IntervalSet keptCompute, keptComm;
    IntervalSet postCompute, postComm;
    TimeNs keptEnd = std::numeric_limits<TimeNs>::min();    // last end of any kept work
    TimeNs postStart = std::numeric_limits<TimeNs>::max();  // first start of any post work
    TimeNs postEnd = std::numeric_limits<TimeNs>::min();    // last end of any post work
    bool hasPost = false;
    // Compute kernels of the kept work, by start: read by the readiness rule
    // while the step is extracted, then released.
    std::vector<ComputeKernel> compute;
    std::vector<ObservedBucket> buckets;  // in launch (else start) order
    std::vector<ReadyPoint> points;       // time-sorted, bytes non-decreasing, last = all bytes
    TimeNs keptComputeEnd = 0;            // last end of compute that keeps its time
    TimeNs postGap = 0;                   // observed: first post start - max(keptComputeEnd, last collective end)
    bool hostOrder = true;                // readiness from host launch order for every bucket
    bool backwardMarked = false;          // the backward pass's start came from a range
    uint64_t totalBytes() const;
};

}  // namespace osc::whatif

// Gradient readiness: when each observed bucket's gradients were ready, and
// the curve "bytes ready by time t" the replay closes new buckets on
// (docs/metrics.md "What-if", readiness).
#pragma once

#include "analyzer/whatif/step_model.h"

#include <optional>

namespace osc::whatif {

enum class ReadinessMode {
    // Refined: bytes become ready only at the ends of kernels of the same
    // name as the kernels that made observed buckets ready (the gradient
    // kernels); between two observed buckets each such kernel brings a share
    // of the later bucket's bytes in proportion to its duration.
    Kernels,
    // The base rule: a piecewise-linear curve through (backward
    // start, 0) and (ready_i, bytes of buckets 1..i), read at the end of
    // every compute kernel of the backward pass.
    Time,
};

// Sets ObservedBucket::ready/readyKnown/readyName for every bucket of `step`:
// the end of the last compute kernel launched (host order) before the
// bucket's collective was launched; without launch records, the collective's
// start where its stream was idle before it (step.hostOrder becomes false).
// Ready times are made non-decreasing. Returns false when no bucket could be
// given a ready time.
bool assignReadiness(StepModel& step);

// Fills step.points. `backwardStart`: where the backward pass began, when a
// range said so (else it is estimated: docs/metrics.md).
void buildReadyPoints(StepModel& step, ReadinessMode mode, std::optional<TimeNs> backwardStart);

}  // namespace osc::whatif

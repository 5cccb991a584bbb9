// Replaying a step with other buckets: close buckets the way DDP does on the
// gradient-ready points, run them one after another on the communication
// stream, move the work after the last one, and measure the result.
#pragma once

#include "analyzer/whatif/cost_fit.h"
#include "analyzer/whatif/step_model.h"

#include <optional>
#include <vector>

namespace osc::whatif {

enum class BucketRule {
    AtLeast,  // PyTorch DDP: a bucket closes once it holds at least the cap
    AtMost,   // a bucket never exceeds the cap (ddp_overlap's plan_buckets)
};

struct PlannedBucket {
    TimeNs ready = 0;
    double bytes = 0;
};

// Buckets of `capBytes` closed on `points` (time-sorted, bytes non-decreasing).
// A bucket closes at the first point where the bytes gathered since the
// previous bucket reach the cap (AtLeast), or where taking the next point
// would exceed it (AtMost); the last point closes whatever remains.
std::vector<PlannedBucket> closeBuckets(const std::vector<ReadyPoint>& points, double capBytes, BucketRule rule);
// The observed buckets as they were (the self-check replays these).
std::vector<PlannedBucket> observedPlan(const StepModel& step);

// Latencies fitted next to alpha (docs/metrics.md: the refinement).
struct Latencies {
    TimeNs readyLagNs = 0;  // gradient ready -> collective start, stream idle
    TimeNs queueGapNs = 0;  // previous collective end -> next start, when queued
};

// The result of one replayed step.
struct StepPrediction {
    int buckets = 0;
    TimeNs step_ns = 0;
    TimeNs exposed_comm_ns = 0;
    std::optional<double> overlap_ratio;
};

// The collective intervals of a plan on one device: bucket k starts at
// max(ready_k + lag, end_{k-1} + gap) and lasts cost(bytes_k).
std::vector<Interval> scheduleBuckets(const std::vector<PlannedBucket>& plan, const CostModel& cost,
                                      const Latencies& lat);
// Several ranks in one collective: bucket k's data moves once the last rank
// has arrived (its own max(ready + lag, previous end + gap)); every rank's
// kernel runs from its arrival to that common end. plans[r] must all have
// the same number of buckets; costs[r] per rank (the longest is used).
std::vector<std::vector<Interval>> scheduleJoint(const std::vector<const std::vector<PlannedBucket>*>& plans,
                                                 const std::vector<const CostModel*>& costs,
                                                 const std::vector<Latencies>& lat);

// The step with these collective intervals (one per bucket, in order):
// compute keeps its time, the post block moves with the last collective,
// step time and exposed communication as docs/design.md section 4 defines them.
StepPrediction evaluateStep(const StepModel& step, const std::vector<Interval>& collectives);

// Bounds for context, as plans to schedule like any other: every collective
// ready only once the compute before the post block is done (no overlap),
// and every collective ready at the first gradient, so that all bytes move
// back to back with compute never waiting (perfect overlap).
std::vector<PlannedBucket> noOverlapPlan(const StepModel& step, std::vector<PlannedBucket> plan);
std::vector<PlannedBucket> perfectOverlapPlan(std::vector<PlannedBucket> plan);

}  // namespace osc::whatif

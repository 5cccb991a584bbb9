#include "analyzer/whatif/replay.h"

#include "analyzer/metrics/intervals.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace osc::whatif {
namespace {

// Half a byte: bucket sizes are whole bytes, shares of them need not be.
constexpr double kByteSlack = 0.5;

// Where the post block (the optimizer) goes once the last collective ends at
// `lastEnd`: after both the compute before it and that collective, keeping
// the gap it had.
TimeNs postShift(const StepModel& step, TimeNs lastEnd) {
    if (!step.hasPost) return 0;
    return std::max(step.keptComputeEnd, lastEnd) + step.postGap - step.postStart;
}

TimeNs endWith(const StepModel& step, const std::vector<Interval>& collectives) {
    TimeNs end = step.start;
    TimeNs last = std::numeric_limits<TimeNs>::min();
    for (const auto& c : collectives) {
        end = std::max(end, c.end);
        last = std::max(last, c.end);
    }
    end = std::max(end, step.keptEnd);
    const TimeNs shift = collectives.empty() ? 0 : postShift(step, last);
    if (step.hasPost) end = std::max(end, step.postEnd + shift);
    return end;
}

}  // namespace

std::vector<PlannedBucket> closeBuckets(const std::vector<ReadyPoint>& points, double capBytes, BucketRule rule) {
    std::vector<PlannedBucket> out;
    double taken = 0;
    for (size_t j = 0; j < points.size(); ++j) {
        const double gathered = points[j].bytes - taken;
        if (gathered <= kByteSlack) continue;
        const bool last = j + 1 == points.size();
        bool close = last;
        if (rule == BucketRule::AtLeast) {
            close = close || gathered + kByteSlack >= capBytes;
        } else {
            // Stop before the next gradient would overflow the cap.
            close = close || points[j + 1].bytes - taken > capBytes + kByteSlack;
        }
        if (!close) continue;
        out.push_back({points[j].time, gathered});
        taken = points[j].bytes;
    }
    return out;
}

std::vector<PlannedBucket> observedPlan(const StepModel& step) {
    std::vector<PlannedBucket> out;
    for (const auto& b : step.buckets) out.push_back({b.ready, static_cast<double>(b.bytes)});
    return out;
}

std::vector<Interval> scheduleBuckets(const std::vector<PlannedBucket>& plan, const CostModel& cost,
                                      const Latencies& lat) {
    std::vector<Interval> out;
    for (size_t k = 0; k < plan.size(); ++k) {
        TimeNs start = plan[k].ready + lat.readyLagNs;
        if (k > 0) start = std::max(start, out.back().end + lat.queueGapNs);
        out.push_back({start, start + cost.costNs(plan[k].bytes)});
    }
    return out;
}

std::vector<std::vector<Interval>> scheduleJoint(const std::vector<const std::vector<PlannedBucket>*>& plans,
                                                 const std::vector<const CostModel*>& costs,
                                                 const std::vector<Latencies>& lat) {
    const size_t ranks = plans.size();
    std::vector<std::vector<Interval>> out(ranks);
    if (ranks == 0) return out;
    const size_t n = plans.front()->size();
    TimeNs prevEnd = std::numeric_limits<TimeNs>::min();
    for (size_t k = 0; k < n; ++k) {
        TimeNs lastArrival = std::numeric_limits<TimeNs>::min(), cost = 0;
        std::vector<TimeNs> arrival(ranks);
        for (size_t r = 0; r < ranks; ++r) {
            const PlannedBucket& b = (*plans[r])[k];
            arrival[r] = b.ready + lat[r].readyLagNs;
            if (k > 0) arrival[r] = std::max(arrival[r], prevEnd + lat[r].queueGapNs);
            lastArrival = std::max(lastArrival, arrival[r]);
            cost = std::max(cost, costs[r]->costNs(b.bytes));
        }
        prevEnd = lastArrival + cost;
        for (size_t r = 0; r < ranks; ++r) out[r].push_back({arrival[r], prevEnd});
    }
    return out;
}

StepPrediction evaluateStep(const StepModel& step, const std::vector<Interval>& collectives) {
    StepPrediction p;
    p.buckets = static_cast<int>(collectives.size());
    TimeNs last = std::numeric_limits<TimeNs>::min();
    for (const auto& c : collectives) last = std::max(last, c.end);
    const TimeNs shift = collectives.empty() ? 0 : postShift(step, last);
    const TimeNs end = endWith(step, collectives);
    const Interval window{step.start, end};

    const auto shifted = [shift](const IntervalSet& set) {
        IntervalSet out(set);
        for (Interval& i : out) i = {i.start + shift, i.end + shift};
        return out;
    };
    IntervalSetBuilder planned;
    for (const auto& c : collectives) planned.add(c);
    const IntervalSet c = clip(unite(step.keptCompute, shifted(step.postCompute)), window);
    const IntervalSet m = clip(unite(unite(step.keptComm, shifted(step.postComm)), planned.finish()), window);
    const TimeNs commNs = totalLength(m);
    const TimeNs overlapNs = totalLength(intersect(c, m));
    p.step_ns = window.length();
    p.exposed_comm_ns = commNs - overlapNs;
    if (commNs > 0) p.overlap_ratio = static_cast<double>(overlapNs) / static_cast<double>(commNs);
    return p;
}

std::vector<PlannedBucket> noOverlapPlan(const StepModel& step, std::vector<PlannedBucket> plan) {
    if (plan.empty()) return plan;
    const TimeNs after = std::max(step.keptComputeEnd, plan.back().ready);
    for (auto& b : plan) b.ready = after;
    return plan;
}

std::vector<PlannedBucket> perfectOverlapPlan(std::vector<PlannedBucket> plan) {
    if (plan.empty()) return plan;
    const TimeNs first = plan.front().ready;
    for (auto& b : plan) b.ready = first;
    return plan;
}

}  // namespace osc::whatif

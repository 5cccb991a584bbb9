#include "analyzer/whatif/readiness.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace osc::whatif {
namespace {

// A known readiness vertex: bytes of its bucket (plus any earlier bucket whose
// ready time was unknown) and the cumulative bytes by then.
struct Vertex {
    TimeNs time = 0;
    double bytes = 0;       // of this vertex alone
    double cumulative = 0;  // of buckets 1..i
};

std::vector<Vertex> knownVertices(const StepModel& step) {
    std::vector<Vertex> v;
    double pending = 0, cumulative = 0;
    for (const auto& b : step.buckets) {
        pending += static_cast<double>(b.bytes);
        cumulative += static_cast<double>(b.bytes);
        if (!b.readyKnown) continue;
        // Buckets launched after the same kernel (reduced after the backward
        // pass) become ready together: one vertex.
        if (!v.empty() && v.back().time == b.ready) {
            v.back().bytes += pending;
            v.back().cumulative = cumulative;
        } else {
            v.push_back({b.ready, pending, cumulative});
        }
        pending = 0;
    }
    if (pending > 0) {
        // The last buckets' readiness is unknown (queued, no launch records):
        // their bytes are ready no later than the last one started.
        const TimeNs t = std::max(v.empty() ? step.start : v.back().time, step.buckets.back().start);
        v.push_back({t, pending, cumulative});
    }
    return v;
}

void addPoint(std::vector<ReadyPoint>& points, TimeNs t, double bytes) {
    if (!points.empty() && points.back().time == t) {
        points.back().bytes = std::max(points.back().bytes, bytes);
        return;
    }
    points.push_back({t, bytes});
}

void timePoints(StepModel& step, const std::vector<Vertex>& v, std::optional<TimeNs> backwardStart) {
    const double total = v.back().cumulative;
    TimeNs t0 = step.start;
    if (backwardStart) {
        t0 = *backwardStart;
    } else if (v.size() >= 2 && v.back().time > v.front().time) {
        // The first bucket's gradients are assumed to come at the rate the others did.
        const double rate = (total - v.front().cumulative) / static_cast<double>(v.back().time - v.front().time);
        if (rate > 0)
            t0 = std::max(step.start, v.front().time - static_cast<TimeNs>(std::llround(v.front().bytes / rate)));
    }
    t0 = std::min(t0, v.front().time);

    std::vector<Vertex> curve;
    curve.push_back({t0, 0, 0});
    curve.insert(curve.end(), v.begin(), v.end());
    const auto at = [&](TimeNs t) {
        if (t <= t0) return 0.0;
        // Last vertex at or before t: with equal times, the last one (the highest bytes).
        auto it = std::upper_bound(curve.begin(), curve.end(), t, [](TimeNs x, const Vertex& c) { return x < c.time; });
        const Vertex& a = *(it - 1);
        if (it == curve.end() || a.time == t) return a.cumulative;
        const Vertex& b = *it;
        return a.cumulative +
               (b.cumulative - a.cumulative) * static_cast<double>(t - a.time) / static_cast<double>(b.time - a.time);
    };
    std::vector<TimeNs> times;
    for (const auto& k : step.compute)
        if (k.end > t0 && k.end <= v.back().time) times.push_back(k.end);
    for (const auto& x : v) times.push_back(x.time);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    for (TimeNs t : times) addPoint(step.points, t, at(t));
    step.points.back().bytes = total;
}

bool kernelPoints(StepModel& step, const std::vector<Vertex>& v, std::optional<TimeNs> backwardStart) {
    std::set<uint32_t> names;
    for (const auto& b : step.buckets)
        if (b.readyKnown && b.readyName != kNoId) names.insert(b.readyName);
    if (names.empty()) return false;
    std::vector<std::pair<TimeNs, TimeNs>> ends;  // (end, duration) of each gradient kernel
    for (const auto& k : step.compute)
        if (names.count(k.name) && k.end <= v.back().time && (!backwardStart || k.start >= *backwardStart))
            ends.emplace_back(k.end, k.end - k.start);
    std::sort(ends.begin(), ends.end());

    // Each gradient kernel brings a share of its bucket's bytes in proportion
    // to its own duration: the kernel that finishes a gradient (an
    // accumulate, a split-K reduce, a weight-gradient GEMM) takes longer for a
    // larger one. Durations are rounded to quarter octaves of their median so
    // that equal layers, whose kernels differ by a few percent of noise, get
    // exactly equal shares (else a bucket of exactly the cap tips either way).
    std::vector<TimeNs> durations;
    for (const auto& e : ends) durations.push_back(e.second);
    std::nth_element(durations.begin(), durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2),
                     durations.end());
    const double median = std::max<double>(1.0, static_cast<double>(durations[durations.size() / 2]));
    std::vector<double> weight(ends.size());
    for (size_t k = 0; k < ends.size(); ++k) {
        const double octaves = std::log2(std::max(1.0, static_cast<double>(ends[k].second)) / median);
        weight[k] = std::exp2(std::round(octaves * 4) / 4);
    }

    size_t firstKept = 0;
    if (!backwardStart && v.size() >= 2) {
        // Without a backward marker the same kernels may also run in the
        // forward pass: give the first bucket the kernels (counted back from
        // its ready point) whose weight its bytes need at the bytes per
        // weight of the later buckets.
        const auto firstEnd =
            static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), v.front().time,
                                                 [](TimeNs t, const auto& e) { return t < e.first; }) -
                                ends.begin());
        double later = 0;
        for (size_t k = firstEnd; k < ends.size(); ++k) later += weight[k];
        if (later > 0 && firstEnd > 0) {
            const double needed = v.front().bytes / ((v.back().cumulative - v.front().cumulative) / later);
            double sum = 0;
            size_t k = firstEnd;
            while (k > 0 && std::fabs(sum + weight[k - 1] - needed) <= std::fabs(sum - needed)) sum += weight[--k];
            firstKept = std::min(k, firstEnd - 1);
        }
    }

    size_t i = firstKept;
    double cumulative = 0;
    for (const auto& x : v) {
        size_t j = i;
        while (j < ends.size() && ends[j].first <= x.time) ++j;
        if (j == i) {
            cumulative += x.bytes;
            addPoint(step.points, x.time, cumulative);
            continue;
        }
        double total = 0;
        for (size_t k = i; k < j; ++k) total += weight[k];
        for (size_t k = i; k < j; ++k) {
            cumulative += x.bytes * weight[k] / total;
            addPoint(step.points, ends[k].first, cumulative);
        }
        i = j;
    }
    step.points.back().bytes = v.back().cumulative;
    return true;
}

}  // namespace

uint64_t StepModel::totalBytes() const {
    uint64_t t = 0;
    for (const auto& b : buckets) t += b.bytes;
    return t;
}

bool assignReadiness(StepModel& step) {
    std::vector<const ComputeKernel*> byLaunch;
    for (const auto& k : step.compute)
        if (k.launch >= 0) byLaunch.push_back(&k);
    std::stable_sort(byLaunch.begin(), byLaunch.end(),
                     [](const ComputeKernel* a, const ComputeKernel* b) { return a->launch < b->launch; });
    bool any = false;
    for (size_t i = 0; i < step.buckets.size(); ++i) {
        ObservedBucket& b = step.buckets[i];
        b.readyKnown = false;
        if (b.launch >= 0 && !byLaunch.empty()) {
            auto it = std::lower_bound(byLaunch.begin(), byLaunch.end(), b.launch,
                                       [](const ComputeKernel* k, TimeNs t) { return k->launch < t; });
            if (it != byLaunch.begin()) {
                const ComputeKernel* k = *(it - 1);
                b.ready = k->end;
                b.readyName = k->name;
                b.readyKnown = true;
            }
        } else {
            step.hostOrder = false;
            const bool idle = i == 0 || b.start > step.buckets[i - 1].end;
            if (idle) {
                b.ready = b.start;
                b.readyKnown = true;
                TimeNs best = INT64_MIN;
                for (const auto& k : step.compute)
                    if (k.end <= b.start && k.end > best) {
                        best = k.end;
                        b.readyName = k.name;
                    }
            }
        }
        any = any || b.readyKnown;
    }
    // Unknown ones (queued behind the previous collective) get the previous
    // ready time: any time before the previous collective ends replays the same.
    TimeNs last = step.start;
    for (auto& b : step.buckets) {
        if (!b.readyKnown) b.ready = last;
        b.ready = std::max(b.ready, last);
        last = b.ready;
    }
    return any;
}

void buildReadyPoints(StepModel& step, ReadinessMode mode, std::optional<TimeNs> backwardStart) {
    step.points.clear();
    step.backwardMarked = backwardStart.has_value();
    const std::vector<Vertex> v = knownVertices(step);
    if (v.empty()) return;
    if (mode == ReadinessMode::Kernels && kernelPoints(step, v, backwardStart)) return;
    step.points.clear();
    timePoints(step, v, backwardStart);
}

}  // namespace osc::whatif

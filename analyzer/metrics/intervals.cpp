#include "analyzer/metrics/intervals.h"

#include <algorithm>

namespace osc {
namespace {

IntervalSet mergeSorted(std::vector<Interval>& v) {
    IntervalSet out;
    out.reserve(v.size());
    for (const auto& i : v) {
        if (i.empty()) continue;
        if (out.empty() || i.start > out.back().end)
            out.push_back(i);
        else if (i.end > out.back().end)
            out.back().end = i.end;
    }
    return out;
}

}  // namespace

IntervalSet IntervalSetBuilder::finish() {
    if (!sorted_) {
        std::sort(out_.begin(), out_.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
        out_ = mergeSorted(out_);
        sorted_ = true;
    }
    return std::move(out_);
}

IntervalSet unionOf(std::vector<Interval> intervals) {
    std::erase_if(intervals, [](const Interval& i) { return i.empty(); });
    if (!std::is_sorted(intervals.begin(), intervals.end(),
                        [](const Interval& a, const Interval& b) { return a.start < b.start; }))
        std::sort(intervals.begin(), intervals.end(),
                  [](const Interval& a, const Interval& b) { return a.start < b.start; });
    return mergeSorted(intervals);
}

IntervalSet unite(const IntervalSet& a, const IntervalSet& b) {
    IntervalSet out;
    out.reserve(a.size() + b.size());
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        const Interval& next = (j == b.size() || (i < a.size() && a[i].start <= b[j].start)) ? a[i++] : b[j++];
        if (out.empty() || next.start > out.back().end)
            out.push_back(next);
        else if (next.end > out.back().end)
            out.back().end = next.end;
    }
    return out;
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
    IntervalSet out;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const TimeNs s = std::max(a[i].start, b[j].start);
        const TimeNs e = std::min(a[i].end, b[j].end);
        if (s < e) out.push_back({s, e});
        // Advance whichever ends first; the other may still meet the next one.
        if (a[i].end < b[j].end)
            ++i;
        else
            ++j;
    }
    return out;
}

IntervalSet subtract(const IntervalSet& a, const IntervalSet& b) {
    IntervalSet out;
    size_t j = 0;
    for (const auto& x : a) {
        TimeNs cur = x.start;
        while (j < b.size() && b[j].end <= cur) ++j;
        size_t k = j;
        while (k < b.size() && b[k].start < x.end) {
            if (b[k].start > cur) out.push_back({cur, b[k].start});
            cur = std::max(cur, b[k].end);
            if (cur >= x.end) break;
            ++k;
        }
        if (cur < x.end) out.push_back({cur, x.end});
    }
    return out;
}

IntervalSet clip(const IntervalSet& a, Interval w) {
    IntervalSet out;
    if (w.empty()) return out;
    auto it = std::upper_bound(a.begin(), a.end(), w.start, [](TimeNs t, const Interval& i) { return t < i.end; });
    for (; it != a.end() && it->start < w.end; ++it)
        out.push_back({std::max(it->start, w.start), std::min(it->end, w.end)});
    return out;
}

TimeNs totalLength(const IntervalSet& a) {
    TimeNs n = 0;
    for (const auto& i : a) n += i.length();
    return n;
}

TimeNs lengthWithin(const IntervalSet& a, Interval w) {
    if (w.empty()) return 0;
    TimeNs n = 0;
    auto it = std::upper_bound(a.begin(), a.end(), w.start, [](TimeNs t, const Interval& i) { return t < i.end; });
    for (; it != a.end() && it->start < w.end; ++it) n += std::min(it->end, w.end) - std::max(it->start, w.start);
    return n;
}

CoverageIndex::CoverageIndex(IntervalSet set) : set_(std::move(set)) {
    prefix_.reserve(set_.size());
    TimeNs sum = 0;
    for (const auto& i : set_) prefix_.push_back(sum += i.length());
}

size_t CoverageIndex::firstEndingAfter(TimeNs t) const {
    auto it = std::upper_bound(set_.begin(), set_.end(), t, [](TimeNs v, const Interval& i) { return v < i.end; });
    return static_cast<size_t>(it - set_.begin());
}

TimeNs CoverageIndex::coveredBefore(TimeNs t) const { return coveredAt(firstEndingAfter(t), t); }

TimeNs CoverageIndex::coveredAt(size_t k, TimeNs t) const {
    // Intervals ending at or before t count fully; the one containing t in part.
    TimeNs n = k ? prefix_[k - 1] : 0;
    if (k < set_.size() && set_[k].start < t) n += t - set_[k].start;
    return n;
}

TimeNs CoverageIndex::covered(TimeNs a, TimeNs b) const {
    if (b <= a || set_.empty()) return 0;
    return coveredBefore(b) - coveredBefore(a);
}

size_t CoverageWalker::firstEndingAfter(size_t from, TimeNs t) const {
    const IntervalSet& set = index_.set_;
    const size_t n = set.size();
    if (from >= n || set[from].end > t) return from;
    // Gallop: ends are sorted (the set is disjoint), so double the step
    // until past t, then binary-search the last stretch.
    size_t lo = from, step = 1, hi = from + 1;
    while (hi < n && set[hi].end <= t) {
        lo = hi;
        step *= 2;
        hi = from + step;
    }
    hi = std::min(hi, n);
    return static_cast<size_t>(std::upper_bound(set.begin() + static_cast<long>(lo) + 1,
                                                set.begin() + static_cast<long>(hi), t,
                                                [](TimeNs v, const Interval& i) { return v < i.end; }) -
                               set.begin());
}

TimeNs CoverageWalker::coveredBefore(TimeNs t) {
    k_ = firstEndingAfter(k_, t);
    return index_.coveredAt(k_, t);
}

TimeNs CoverageWalker::covered(TimeNs a, TimeNs b) {
    const TimeNs before = coveredBefore(a);
    if (b <= a) return 0;
    return index_.coveredAt(firstEndingAfter(k_, b), b) - before;
}

}  // namespace osc

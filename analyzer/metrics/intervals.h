// Interval algebra on half-open [start, end) nanosecond intervals.
//
// Every metric of docs/design.md section 4 is a length of unions, intersections
// and differences of per-category busy time, so the analyzer, the report and
// the GUI's range selection all go through these few operations.
//
// Conventions (docs/metrics.md "Intervals"):
// - An interval with end <= start is empty: zero-length records and inverted
//   records (end < start, a clock glitch or a truncated record) carry no time.
// - An IntervalSet is sorted, disjoint and non-touching: [0,5) and [5,9)
//   become [0,9). Every function returning an IntervalSet keeps that form.
#pragma once

#include "analyzer/capture/model.h"

#include <climits>
#include <vector>

namespace osc {

// a + b, or INT64_MAX / INT64_MIN where that does not fit. Each time lies
// within +-2^62 ns, so one difference fits; sums of many durations (over
// devices, over overlapping kernels) need not.
inline TimeNs saturatingAdd(TimeNs a, TimeNs b) {
    TimeNs sum;
    if (__builtin_add_overflow(a, b, &sum)) return b < 0 ? INT64_MIN : INT64_MAX;
    return sum;
}

inline TimeNs saturatingSub(TimeNs a, TimeNs b) {
    TimeNs difference;
    if (__builtin_sub_overflow(a, b, &difference)) return b > 0 ? INT64_MIN : INT64_MAX;
    return difference;
}

struct Interval {
    TimeNs start = 0, end = 0;
    TimeNs length() const { return end > start ? end - start : 0; }
    bool empty() const { return end <= start; }
    friend bool operator==(const Interval&, const Interval&) = default;
};

using IntervalSet = std::vector<Interval>;

// Builds a merged IntervalSet from intervals added in any order. Intervals
// added in start order (the columnar tables after Capture::finalize) are
// merged on the fly, so memory stays proportional to the merged result and
// nothing is sorted; an out-of-order interval switches to sort-at-finish.
class IntervalSetBuilder {
public:
    void reserve(size_t n) { out_.reserve(n); }
    void add(TimeNs start, TimeNs end) {
        if (end <= start) return;
        if (out_.empty() || start > out_.back().end) {
            out_.push_back({start, end});
        } else if (start >= out_.back().start) {
            if (end > out_.back().end) out_.back().end = end;
        } else {
            // Merging overlapping intervals keeps the union exact in any
            // order; only the final sort is needed to restore the form.
            sorted_ = false;
            out_.push_back({start, end});
        }
    }
    void add(Interval i) { add(i.start, i.end); }
    IntervalSet finish();

private:
    IntervalSet out_;
    bool sorted_ = true;
};

// Union of arbitrary intervals (any order, empties dropped).
IntervalSet unionOf(std::vector<Interval> intervals);
// Set operations on merged sets, linear in the total size.
IntervalSet unite(const IntervalSet& a, const IntervalSet& b);
IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);
IntervalSet subtract(const IntervalSet& a, const IntervalSet& b);  // a ∖ b
// The part of a set inside a window (binary search, then a copy of the hits).
IntervalSet clip(const IntervalSet& a, Interval window);
TimeNs totalLength(const IntervalSet& a);
// Length of a ∩ window without building it: O(log n + hits).
TimeNs lengthWithin(const IntervalSet& a, Interval window);

// Prefix sums over a merged IntervalSet: "how much of [a, b) is covered" in
// O(log n), independent of how many intervals lie inside. The GUI asks this
// for every range selection and every zoom level, the analyzer once per step
// and once per communication operation.
class CoverageIndex {
public:
    CoverageIndex() = default;
    explicit CoverageIndex(IntervalSet set);

    // |set ∩ [a, b)|; 0 when b <= a.
    TimeNs covered(TimeNs a, TimeNs b) const;
    TimeNs covered(Interval w) const { return covered(w.start, w.end); }
    TimeNs total() const { return prefix_.empty() ? 0 : prefix_.back(); }
    const IntervalSet& intervals() const { return set_; }
    // Index of the first interval whose end is after t (set size when none).
    size_t firstEndingAfter(TimeNs t) const;

private:
    friend class CoverageWalker;
    // Covered length strictly before t.
    TimeNs coveredBefore(TimeNs t) const;
    // The same, given k = firstEndingAfter(t) (found by a search or a walk).
    TimeNs coveredAt(size_t k, TimeNs t) const;

    IntervalSet set_;
    std::vector<TimeNs> prefix_;  // prefix_[i] = total length of set_[0..i]
};

// A CoverageIndex read at times that never decrease (the GUI's pixel
// columns, left to right): each time's interval is found by galloping
// forward from the previous one's, a short cache-local search per query
// instead of a binary search over the whole set, on the index's own prefix
// sums. The index must outlive the walker.
class CoverageWalker {
public:
    explicit CoverageWalker(const CoverageIndex& index) : index_(index) {}
    // Covered length strictly before t; t must not decrease between calls.
    TimeNs coveredBefore(TimeNs t);
    // |set ∩ [a, b)|; a must not decrease between calls (of either method),
    // b may be anywhere after it: found by galloping on from a's interval.
    TimeNs covered(TimeNs a, TimeNs b);

private:
    // First interval at or after `from` whose end is after t.
    size_t firstEndingAfter(size_t from, TimeNs t) const;

    const CoverageIndex& index_;
    size_t k_ = 0;  // first interval whose end is after the last t
};

}  // namespace osc

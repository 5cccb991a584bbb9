// "How much of [a, b) is covered" for the consecutive pixel columns of the
// overlap lane, at a cost that follows the pixels: the interval set's prefix
// sums (kept here, next to the analyzer's CoverageIndex) give the covered
// length before any time in O(1) once its interval is found, and the interval
// is found by galloping forward from the previous column's, so a frame makes
// one short, cache-local search per column boundary instead of walking every
// interval on screen or binary-searching the whole set.
#pragma once

#include "analyzer/metrics/intervals.h"

#include <vector>

namespace osc::gui {

// Prefix sums of a merged IntervalSet: prefix[i] = total length of set[0..i].
std::vector<TimeNs> intervalPrefix(const IntervalSet& set);

class CoverageWalker {
public:
    CoverageWalker(const IntervalSet& set, const std::vector<TimeNs>& prefix) : set_(set), prefix_(prefix) {}
    // Covered length strictly before t; t must not decrease between calls.
    TimeNs coveredBefore(TimeNs t);

private:
    const IntervalSet& set_;
    const std::vector<TimeNs>& prefix_;
    size_t k_ = 0;  // first interval whose end is after the last t
};

}  // namespace osc::gui

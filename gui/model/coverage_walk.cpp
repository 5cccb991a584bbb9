#include "gui/model/coverage_walk.h"

#include <algorithm>

namespace osc::gui {

std::vector<TimeNs> intervalPrefix(const IntervalSet& set) {
    std::vector<TimeNs> prefix(set.size());
    TimeNs sum = 0;
    for (size_t i = 0; i < set.size(); ++i) prefix[i] = sum += set[i].length();
    return prefix;
}

TimeNs CoverageWalker::coveredBefore(TimeNs t) {
    const size_t n = set_.size();
    if (k_ < n && set_[k_].end <= t) {
        // Gallop: ends are sorted (the set is disjoint), so double the step
        // until past t, then binary-search the last stretch.
        size_t lo = k_, step = 1, hi = k_ + 1;
        while (hi < n && set_[hi].end <= t) {
            lo = hi;
            step *= 2;
            hi = k_ + step;
        }
        hi = std::min(hi, n);
        k_ = static_cast<size_t>(std::upper_bound(set_.begin() + static_cast<long>(lo) + 1, set_.begin() + static_cast<long>(hi), t,
                                                  [](TimeNs v, const Interval& i) { return v < i.end; }) -
                                 set_.begin());
    }
    TimeNs covered = k_ ? prefix_[k_ - 1] : 0;
    if (k_ < n && set_[k_].start < t) covered += t - set_[k_].start;
    return covered;
}

}  // namespace osc::gui

#include "gui/model/event_row.h"

#include <algorithm>

namespace osc::gui {

void EventRow::add(TimeNs s, TimeNs e, uint32_t r, uint8_t cat, EventSource src) {
    start.push_back(s);
    end.push_back(std::max(s, e));
    ref.push_back(r);
    category.push_back(cat);
    source.push_back(src);
}

void EventRow::finish() {
    const size_t n = size();
    durationBlocks_.assign(n / kDurationBlock + 1, 0);
    TimeNs sum = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i % kDurationBlock == 0) durationBlocks_[i / kDurationBlock] = sum;
        sum += end[i] - start[i];
    }
    if (n % kDurationBlock == 0) durationBlocks_.back() = sum;
    endMax_.clear();
    if (!std::is_sorted(end.begin(), end.end())) {
        endMax_.resize(n);
        TimeNs m = INT64_MIN;
        for (size_t i = 0; i < n; ++i) endMax_[i] = m = std::max(m, end[i]);
    }
    for (auto* v : {&start, &end, &endMax_}) v->shrink_to_fit();
    ref.shrink_to_fit();
    category.shrink_to_fit();
    source.shrink_to_fit();
    summary.build(start, end, category);
}

size_t EventRow::firstEndingAfter(TimeNs t) const {
    const std::vector<TimeNs>& m = endMaxColumn();
    return static_cast<size_t>(std::upper_bound(m.begin(), m.end(), t) - m.begin());
}

size_t EventRow::gallopToStart(size_t from, TimeNs t) const {
    const size_t n = size();
    if (from >= n || start[from] >= t) return from;
    size_t lo = from, step = 1, hi = from + 1;
    while (hi < n && start[hi] < t) {
        lo = hi;
        step *= 2;
        hi = from + step;
    }
    hi = std::min(hi, n);
    return static_cast<size_t>(
        std::lower_bound(start.begin() + static_cast<long>(lo) + 1, start.begin() + static_cast<long>(hi), t) -
        start.begin());
}

TimeNs EventRow::durationBefore(size_t i) const {
    const size_t block = i / kDurationBlock;
    TimeNs sum = durationBlocks_[block];
    for (size_t k = block * kDurationBlock; k < i; ++k) sum += end[k] - start[k];
    return sum;
}

TimeNs EventRow::durationSum(size_t i, size_t j) const {
    if (j <= i) return 0;
    j = std::min(j, size());
    if (j - i <= kDurationBlock) {
        TimeNs sum = 0;
        for (size_t k = i; k < j; ++k) sum += end[k] - start[k];
        return sum;
    }
    return durationBefore(j) - durationBefore(i);
}

size_t EventRow::hitTest(TimeNs t, TimeNs toleranceNs) const {
    const size_t n = size();
    size_t best = n;
    TimeNs bestDist = toleranceNs + 1;
    const size_t last =
        static_cast<size_t>(std::upper_bound(start.begin(), start.end(), t + toleranceNs) - start.begin());
    for (size_t i = firstEndingAfter(t - toleranceNs - 1); i < last; ++i) {
        const TimeNs dist = t < start[i] ? start[i] - t : (t >= end[i] ? t - end[i] + 1 : 0);
        // Among events containing t, the shortest one is the most specific.
        const bool better =
            dist < bestDist || (dist == 0 && bestDist == 0 && end[i] - start[i] < end[best] - start[best]);
        if (better) {
            best = i;
            bestDist = dist;
        }
    }
    return best;
}

}  // namespace osc::gui

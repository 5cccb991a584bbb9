#include "gui/model/row_summary.h"

#include <algorithm>
#include <bit>

namespace osc::gui {
namespace {

// Adds [s, e) to the buckets it touches (at most three: callers only pass
// events shorter than two bucket widths).
void addClipped(std::vector<SummaryCell>& cells, TimeNs origin, TimeNs width, TimeNs s, TimeNs e, uint8_t cat) {
    const size_t first = std::min(cells.size() - 1, static_cast<size_t>((s - origin) / width));
    cells[first].count += 1;
    for (size_t k = first;; ++k) {
        const TimeNs b0 = origin + static_cast<TimeNs>(k) * width, b1 = b0 + width;
        const TimeNs len = std::min(e, b1) - std::max(s, b0);
        if (len > 0) cells[k].busy[cat] += static_cast<float>(len);
        if (e <= b1 || k + 1 >= cells.size()) break;
    }
}

void finishLong(RowSummary::LongEvents& l, const std::vector<TimeNs>& end) {
    l.endMax.resize(l.index.size());
    TimeNs m = INT64_MIN;
    for (size_t i = 0; i < l.index.size(); ++i) l.endMax[i] = m = std::max(m, end[l.index[i]]);
}

}  // namespace

uint8_t SummaryCell::dominant() const {
    uint8_t best = 0;
    for (uint8_t c = 1; c < 3; ++c) {
        if (busy[c] > busy[best]) best = c;
    }
    return best;
}

int RowSummary::levelFor(double nsPerPx) const {
    if (levels_.empty() || nsPerPx < static_cast<double>(base_)) return -1;
    int level = 0;
    while (level + 1 < levels() && static_cast<double>(bucketWidth(level + 1)) <= nsPerPx) ++level;
    return level;
}

void RowSummary::build(const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                       const std::vector<uint8_t>& category) {
    levels_.clear();
    const size_t n = start.size();
    if (n == 0) return;
    origin_ = start.front();
    TimeNs last = origin_ + 1;
    for (TimeNs e : end) last = std::max(last, e);
    const TimeNs span = last - origin_;
    // About four events per base bucket on average: the cells stay a fraction
    // of the row's own memory, and below the base a pixel holds few events.
    // Times lie within +-2^62 ns, so a span reaches 2^63: widths stop at
    // kMaxWidth, where twice a width and a bucket's end still fit in TimeNs.
    constexpr auto maxWidth = static_cast<uint64_t>(kMaxWidth);
    const auto perEvent = static_cast<uint64_t>(span) / n;
    const uint64_t target = perEvent >= maxWidth / 4 ? maxWidth : std::max<uint64_t>(1, 4 * perEvent);
    base_ = static_cast<TimeNs>(std::bit_ceil(target));

    auto bucketsAt = [&](TimeNs width) { return static_cast<size_t>(span / width + (span % width != 0)); };
    Level level0;
    level0.cells.resize(bucketsAt(base_));
    for (size_t i = 0; i < n; ++i) {
        const uint8_t cat = std::min<uint8_t>(category[i], 2);
        if (end[i] - start[i] < 2 * base_)
            addClipped(level0.cells, origin_, base_, start[i], end[i], cat);
        else
            level0.longEvents.index.push_back(static_cast<uint32_t>(i));
    }
    levels_.push_back(std::move(level0));
    while (levels_.back().cells.size() > 1 && bucketWidth(levels() - 1) < kMaxWidth) {
        const Level& below = levels_.back();
        const TimeNs width = bucketWidth(levels());
        Level up;
        up.cells.resize(bucketsAt(width));
        for (size_t k = 0; k < below.cells.size(); ++k) {
            SummaryCell& c = up.cells[k / 2];
            for (int cat = 0; cat < 3; ++cat)
                c.busy[static_cast<size_t>(cat)] += below.cells[k].busy[static_cast<size_t>(cat)];
            c.count += below.cells[k].count;
        }
        for (uint32_t i : below.longEvents.index) {
            if (end[i] - start[i] < 2 * width)
                addClipped(up.cells, origin_, width, start[i], end[i], std::min<uint8_t>(category[i], 2));
            else
                up.longEvents.index.push_back(i);
        }
        levels_.push_back(std::move(up));
    }
    for (Level& l : levels_) {
        finishLong(l.longEvents, end);
        l.cells.shrink_to_fit();
        l.longEvents.index.shrink_to_fit();
    }
}

}  // namespace osc::gui

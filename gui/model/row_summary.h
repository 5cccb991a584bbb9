// Multi-resolution summary of one EventRow (the mipmap of Perfetto and Tracy).
//
// Zoomed out, a pixel column holds tens to thousands of events; reading them
// per frame is memory-bound and grows with the capture. Instead, for every
// power-of-two bucket width W = base * 2^level the row keeps, per bucket, the
// busy nanoseconds per category and the number of events starting there,
// counting only the events shorter than 2 W. Longer events are listed per
// level (start-sorted, with a prefix maximum of ends) and drawn one by one, so
// a frame reads O(pixels) cells plus the events that are wide enough to see.
// Built once at load in O(n): level 0 from the events, each level above from
// the two cells below plus the events that stopped being "long" at this width.
#pragma once

#include "analyzer/capture/model.h"

#include <array>
#include <cstdint>
#include <vector>

namespace osc::gui {

struct SummaryCell {
    std::array<float, 3> busy{};  // ns per osc::Category, clipped to the bucket
    uint32_t count = 0;           // summarised events starting in the bucket
    float total() const { return busy[0] + busy[1] + busy[2]; }
    // The category with the most busy time (ties: the lower category).
    uint8_t dominant() const;
};

class RowSummary {
public:
    struct LongEvents {
        std::vector<uint32_t> index;  // into the row, start-sorted
        std::vector<TimeNs> endMax;   // prefix maximum of the events' ends
    };

    // start must be sorted; end >= start; category < 3.
    void build(const std::vector<TimeNs>& start, const std::vector<TimeNs>& end, const std::vector<uint8_t>& category);

    // The widest bucket: the top level has one bucket, or up to four on a
    // row spanning more than this (times near the +-2^62 ns limits).
    static constexpr TimeNs kMaxWidth = TimeNs{1} << 61;

    bool empty() const { return levels_.empty(); }
    int levels() const { return static_cast<int>(levels_.size()); }
    TimeNs origin() const { return origin_; }
    TimeNs bucketWidth(int level) const { return base_ << level; }
    // The finest level whose buckets are at least half a pixel (W <= nsPerPx
    // < 2 W, or the top level), or -1 when a pixel is narrower than the base
    // bucket: there are few events per pixel and drawing them is cheap.
    int levelFor(double nsPerPx) const;
    const std::vector<SummaryCell>& cells(int level) const { return levels_[static_cast<size_t>(level)].cells; }
    // Events with duration >= 2 * bucketWidth(level): drawn on their own.
    const LongEvents& longEvents(int level) const { return levels_[static_cast<size_t>(level)].longEvents; }

private:
    struct Level {
        std::vector<SummaryCell> cells;
        LongEvents longEvents;
    };
    TimeNs origin_ = 0, base_ = 1;
    std::vector<Level> levels_;
};

}  // namespace osc::gui

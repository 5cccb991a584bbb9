#include "gui/model/rank_row_hit.h"

#include <tuple>

namespace osc::gui {

EventRef rankRowHit(const TimelineModel& model, int group, TimeNs t, TimeNs toleranceNs) {
    if (model.empty() || group < 0 || static_cast<size_t>(group) >= model.groups().size()) return {};
    EventRef best;
    // (misses t, not communication): smaller is better.
    std::tuple<bool, bool> bestRank{true, true};
    for (int l : model.groups()[static_cast<size_t>(group)].lanes) {
        const Lane& lane = model.lane(l);
        if (lane.kind != LaneKind::Stream) continue;
        for (size_t r = 0; r < lane.rows.size(); ++r) {
            const EventRow& row = lane.rows[r];
            const size_t i = row.hitTest(t, toleranceNs);
            if (i >= row.size()) continue;
            const bool misses = t < row.start[i] || t >= row.end[i];
            const bool other = row.category[i] != static_cast<uint8_t>(Category::Communication);
            const std::tuple<bool, bool> rank{misses, other};
            if (!best.valid() || rank < bestRank) {
                best = {l, static_cast<int>(r), i};
                bestRank = rank;
            }
        }
    }
    return best;
}

}  // namespace osc::gui

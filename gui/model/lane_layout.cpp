#include "gui/model/lane_layout.h"

#include <algorithm>

namespace osc::gui {

int LaneLayout::shownRows(const Lane& lane, double nsPerPx) {
    const int all = std::max<int>(1, static_cast<int>(lane.rows.size()));
    if (nsPerPx <= 0 || lane.kind != LaneKind::Host || lane.rowLongest.size() != lane.rows.size()) return all;
    int shown = 1;
    for (size_t r = 0; r < lane.rowLongest.size(); ++r)
        if (static_cast<double>(lane.rowLongest[r]) >= kMinRowEventPx * nsPerPx) shown = static_cast<int>(r) + 1;
    return shown;
}

LaneLayout::LaneLayout(const TimelineModel& model, LaneMetrics metrics, double nsPerPx) : metrics_(metrics) {
    const std::vector<int> visible = model.visibleLanes();
    int y = 0;
    int lastGroup = -1;
    for (int l : visible) {
        const Lane& lane = model.lane(l);
        if (lane.group != lastGroup) {
            groups_.push_back({lane.group, y});
            y += metrics.headerHeight;
            lastGroup = lane.group;
        }
        LaneSlot slot;
        slot.lane = l;
        slot.y = y;
        if (lane.kind == LaneKind::Overlap) {
            slot.rowHeight = metrics.overlapHeight;
            slot.height = metrics.overlapHeight;
        } else {
            slot.rowHeight = metrics.rowHeight;
            slot.rows = shownRows(lane, nsPerPx);
            slot.height = metrics.rowHeight * slot.rows;
        }
        lanes_.push_back(slot);
        y += slot.height + metrics.gap;
    }
    total_ = y;
}

const LaneSlot* LaneLayout::laneAt(int y) const {
    auto it = std::upper_bound(lanes_.begin(), lanes_.end(), y, [](int v, const LaneSlot& s) { return v < s.y; });
    if (it == lanes_.begin()) return nullptr;
    --it;
    return y < it->y + it->height ? &*it : nullptr;
}

int LaneLayout::groupHeaderAt(int y) const {
    for (const auto& g : groups_) {
        if (y >= g.y && y < g.y + metrics_.headerHeight) return g.group;
    }
    return -1;
}

const LaneSlot* LaneLayout::slotOf(int lane) const {
    for (const auto& s : lanes_) {
        if (s.lane == lane) return &s;
    }
    return nullptr;
}

}  // namespace osc::gui

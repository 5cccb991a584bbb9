#include "gui/model/lane_layout.h"

#include <algorithm>

namespace osc::gui {

LaneLayout::LaneLayout(const TimelineModel& model, LaneMetrics metrics) : metrics_(metrics) {
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
            slot.height = metrics.rowHeight * std::max<int>(1, static_cast<int>(lane.rows.size()));
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

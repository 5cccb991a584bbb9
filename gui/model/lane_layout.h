// Vertical placement of the visible lanes: where each lane and each group
// header sits, in content pixels (before vertical scrolling). Kept apart from
// painting so that hit testing and tests use the very same numbers.
#pragma once

#include "gui/model/timeline_model.h"

#include <vector>

namespace osc::gui {

struct LaneMetrics {
    int headerHeight = 20;  // group title bar
    int rowHeight = 18;     // one row of events
    int overlapHeight = 22;
    int gap = 2;  // between lanes
};

struct LaneSlot {
    int lane = 0;
    int y = 0, height = 0;
    int rowHeight = 0;  // per event row
};

struct GroupSlot {
    int group = 0;
    int y = 0;  // of the header
};

class LaneLayout {
public:
    LaneLayout() = default;
    LaneLayout(const TimelineModel& model, LaneMetrics metrics = {});

    const std::vector<LaneSlot>& lanes() const { return lanes_; }
    const std::vector<GroupSlot>& groups() const { return groups_; }
    int totalHeight() const { return total_; }
    const LaneMetrics& metrics() const { return metrics_; }

    // The lane slot covering content y, or nullptr (headers and gaps).
    const LaneSlot* laneAt(int y) const;
    // The group whose header covers content y, or -1.
    int groupHeaderAt(int y) const;
    const LaneSlot* slotOf(int lane) const;

private:
    std::vector<LaneSlot> lanes_;
    std::vector<GroupSlot> groups_;
    int total_ = 0;
    LaneMetrics metrics_;
};

}  // namespace osc::gui

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
    int rows = 1;       // event rows shown: the first `rows` of the lane
};

struct GroupSlot {
    int group = 0;
    int y = 0;  // of the header
};

class LaneLayout {
public:
    // A CPU lane's row is shown only while its longest event spans at
    // least this many pixels: zoomed out, a lane does not stay tall and empty.
    static constexpr double kMinRowEventPx = 3;

    LaneLayout() = default;
    // `nsPerPx` > 0: the zoom the lanes are laid out for (CPU lanes show the
    // rows with something to see at it); 0 shows every row.
    LaneLayout(const TimelineModel& model, LaneMetrics metrics = {}, double nsPerPx = 0);

    // How many rows of `lane` are shown at `nsPerPx` (0: all).
    static int shownRows(const Lane& lane, double nsPerPx);

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

// Vertical placement of the visible lanes: where each lane and each group
// header sits, in content pixels (before vertical scrolling). Kept apart from
// painting so that hit testing and tests use the very same numbers.
#pragma once

#include "gui/model/rank_groups.h"
#include "gui/model/timeline_model.h"

#include <vector>

namespace osc::gui {

struct LaneMetrics {
    int headerHeight = 20;  // group title bar
    int rowHeight = 18;     // one row of events
    int overlapHeight = 22;
    int gap = 2;             // between lanes
    int sectionHeight = 18;  // a host's or communicator's header (RankRows::sections)
};

struct LaneSlot {
    int lane = 0;
    int group = -1;  // the lane's device group
    int y = 0, height = 0;
    int rowHeight = 0;  // per event row
    int rows = 1;       // event rows shown: the first `rows` of the lane
    // One row per rank: the group's overlap lane standing for the whole
    // device (compute, hidden and exposed communication in one thin row).
    bool rankRow = false;
};

struct GroupSlot {
    int group = 0;
    int y = 0;  // of the header
};

struct SectionSlot {
    int section = 0;  // into RankRows::sections
    int y = 0;        // of the header
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
    // With the ranks grouped under headers, or one row per rank.
    LaneLayout(const TimelineModel& model, const RankRows& ranks, LaneMetrics metrics = {}, double nsPerPx = 0);

    // One row per rank: a row's pitch (row and gap) so that `rows` rows in
    // `blocks` blocks (each under a header when `headers`) fit `available`
    // pixels, within [kMinRankPitch, kMaxRankPitch].
    static constexpr int kMinRankPitch = 3, kMaxRankPitch = 18;
    // Above the first rank row (unless a header is) and below the last: a
    // label centred on a thin row is taller than the row, and must not reach
    // under the ruler or past the window's edge.
    static constexpr int kRankBlockPad = 3;
    static int rankPitch(int rows, int blocks, bool headers, int available, const LaneMetrics& metrics);
    // Labels of rows `pitch` apart, each `textHeight` high: one every this
    // many rows, so that none is drawn over another.
    static int labelStride(int pitch, int textHeight);

    // How many rows of `lane` are shown at `nsPerPx` (0: all).
    static int shownRows(const Lane& lane, double nsPerPx);

    const std::vector<LaneSlot>& lanes() const { return lanes_; }
    const std::vector<GroupSlot>& groups() const { return groups_; }
    const std::vector<SectionSlot>& sections() const { return sections_; }
    const std::vector<RankSection>& rankSections() const { return rankSections_; }
    bool oneRow() const { return oneRow_; }
    int rankPitch() const { return pitch_; }  // one row per rank: row plus gap; 0 otherwise
    int totalHeight() const { return total_; }
    const LaneMetrics& metrics() const { return metrics_; }

    // The lane slot covering content y, or nullptr (headers and gaps).
    const LaneSlot* laneAt(int y) const;
    // The group whose header covers content y, or -1.
    int groupHeaderAt(int y) const;
    const LaneSlot* slotOf(int lane) const;
    // The section whose header covers content y, or -1.
    int sectionHeaderAt(int y) const;
    // One row per rank: the row standing for a group, or nullptr.
    const LaneSlot* rankRowOf(int group) const;

private:
    void placeGroup(const TimelineModel& model, int group, const std::vector<int>& lanes, double nsPerPx, int& y);
    void placeRankRow(const TimelineModel& model, int group, int& y);
    void buildIndex(const TimelineModel& model);

    std::vector<LaneSlot> lanes_;
    std::vector<GroupSlot> groups_;
    std::vector<SectionSlot> sections_;
    std::vector<RankSection> rankSections_;
    std::vector<int> slotIndex_;     // lane -> index into lanes_, -1 when not shown
    std::vector<int> rankRowIndex_;  // group -> its rank row in lanes_, -1 when none
    bool oneRow_ = false;
    int pitch_ = 0;
    int total_ = 0;
    LaneMetrics metrics_;
};

}  // namespace osc::gui

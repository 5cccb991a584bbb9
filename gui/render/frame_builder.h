// Turns the model and the current view into a DrawList.
//
// Work per frame follows what is on screen: lanes outside the viewport are
// skipped, each row starts at a binary search for the left edge, and runs of
// events narrower than kMinEventPx are folded column by column (one gallop
// per pixel column, Tracy's folding) into blocks shaded by their busy share.
// Further out, where a pixel holds several events on average, rows are drawn
// from their multi-resolution summary (RowSummary) instead of the events.
// Coverage lanes (overlap / exposed) are drawn from prefix sums per column
// boundary, found by galloping forward (CoverageWalker). A pipeline stage's
// bubbles go under its stream lanes' events (DrawList::hatches).
#pragma once

#include "gui/model/event_details.h"
#include "gui/model/lane_layout.h"
#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"
#include "gui/render/draw_list.h"

#include <optional>

namespace osc::gui {

struct Viewport {
    TimeScale scale;                    // time <-> x inside the event area
    float left = 0;                     // widget x of the event area's left edge
    float top = 0;                      // widget y of content y = 0 (after the ruler, minus the scroll)
    float clipTop = 0, clipBottom = 0;  // widget y range that is visible
};

class FrameBuilder {
public:
    static constexpr double kMinEventPx = 2.0;   // narrower events are folded
    static constexpr double kMinLabelPx = 40.0;  // narrower blocks carry no text

    FrameBuilder(const TimelineModel& model, const LaneLayout& layout) : model_(model), layout_(layout) {}

    void build(const Viewport& vp, DrawList& out) const;
    // Where an event is drawn (un-clipped), or nothing if its lane is not shown.
    std::optional<DrawRect> eventRect(const Viewport& vp, EventRef ref) const;

    // Events in the row under pixel column x: [first, last) indices of the
    // events that start in that column (used for folded-block tooltips).
    static std::pair<size_t, size_t> eventsInColumn(const EventRow& row, const TimeScale& scale, double x);

private:
    void buildLane(const LaneSlot& slot, const Viewport& vp, DrawList& out) const;
    void buildRow(const Lane& lane, const EventRow& row, const Viewport& vp, float y, float h, DrawList& out) const;
    // Zoomed out: one pass over the row summary's cells at `level`, then the
    // events long enough to be drawn on their own.
    void buildSummarisedRow(const Lane& lane, const EventRow& row, int level, const Viewport& vp, float y, float h,
                            DrawList& out) const;
    // A stream lane of a pipeline stage: its bubbles, one hatch rectangle per
    // run of pixel columns, found by binary search from the left edge.
    void buildBubbles(const StageBubbles& bubbles, const Viewport& vp, float y, float h, DrawList& out) const;
    void buildCoverageLane(const DeviceGroup& group, const Viewport& vp, float y, float h, DrawList& out) const;
    uint32_t eventColour(const Lane& lane, const EventRow& row, size_t i) const;

    const TimelineModel& model_;
    const LaneLayout& layout_;
};

}  // namespace osc::gui

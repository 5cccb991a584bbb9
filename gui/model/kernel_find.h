// Find (Ctrl+F): kernels whose name matches a pattern, with duration statistics
// and every hit, in time order for stepping through them and per lane for
// outlining the ones on screen. There is no cap: a hit costs 12 bytes, so
// even ten million hits stay around 120 MB, and painting looks only at the
// hits in view (one per pixel column at most).
#pragma once

#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

struct FindHit {
    int32_t lane = -1;
    uint32_t index = 0;  // into the lane's (single) row
    EventRef ref() const { return {lane, 0, index}; }
};

struct FindResult {
    std::vector<FindHit> hits;  // every match, in time order across all lanes
    // Per lane (indexed like TimelineModel::lanes()): the matching row
    // indices, ascending (rows are start-sorted, so also in time order).
    std::vector<std::vector<uint32_t>> byLane;
    size_t count = 0;
    TimeNs total_ns = 0, min_ns = 0, median_ns = 0, max_ns = 0;

    // The hit nearest after (direction > 0) or before time `t`, as an index
    // into `hits`, wrapping around; -1 when there are none.
    long nextAfter(TimeNs t, int direction, const TimelineModel& model) const;
};

struct FindQuery {
    std::string pattern;             // case-insensitive substring of the demangled or short name
    std::optional<ViewRange> range;  // only kernels starting inside it
};

FindResult findKernels(const TimelineModel& model, const FindQuery& query);

// The hits of one lane to outline in view: at most one per pixel column
// (the first hit starting in it, or running into the view), found by binary
// search, so a frame costs O(columns log hits) however many hits there are.
std::vector<uint32_t> visibleHits(const EventRow& row, const std::vector<uint32_t>& laneHits, const TimeScale& scale);

}  // namespace osc::gui

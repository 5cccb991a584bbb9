// Find (Ctrl+F): events whose name matches a pattern (kernels; with
// `everything`, also NVTX ranges, CPU operators and API calls), with
// duration statistics and every hit, in time order for stepping through them
// and per lane row for outlining the ones on screen. There is no cap: a hit
// costs 16 bytes, so even ten million hits stay around 160 MB, and painting
// looks only at the hits in view (one per pixel column and row at most).
#pragma once

#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

struct FindHit {
    int32_t lane = -1;
    int32_t row = 0;     // event row of the lane (nesting depth on NVTX and CPU lanes)
    uint32_t index = 0;  // into that row
    EventRef ref() const { return {lane, row, index}; }
};

struct FindResult {
    std::vector<FindHit> hits;  // every match, in time order across all lanes
    // Per lane row: the matching indices, ascending (rows are start-sorted,
    // so also in time order). Row r of lane l is byRow[rowBase[l] + r].
    std::vector<std::vector<uint32_t>> byRow;
    std::vector<uint32_t> rowBase;
    size_t count = 0;
    size_t kernels = 0, ranges = 0, operators = 0, calls = 0;  // of count, by kind
    TimeNs total_ns = 0, min_ns = 0, median_ns = 0, max_ns = 0;

    // The hits on one row of one lane (empty when none).
    const std::vector<uint32_t>& hitsOf(int lane, int row) const;

    // The hit nearest after (direction > 0) or before time `t`, as an index
    // into `hits`, wrapping around; -1 when there are none.
    long nextAfter(TimeNs t, int direction, const TimelineModel& model) const;
};

struct FindQuery {
    std::string pattern;             // case-insensitive substring of the demangled or short name
    std::optional<ViewRange> range;  // only events starting inside it
    // Kernels only (false), or also NVTX ranges, CPU operators and API calls.
    bool everything = false;
};

FindResult findEvents(const TimelineModel& model, const FindQuery& query);
// Kernels only, whatever query.everything says (--select picks a kernel).
FindResult findKernels(const TimelineModel& model, FindQuery query);

// The hits of one lane to outline in view: at most one per pixel column
// (the first hit starting in it, or running into the view), found by binary
// search, so a frame costs O(columns log hits) however many hits there are.
std::vector<uint32_t> visibleHits(const EventRow& row, const std::vector<uint32_t>& laneHits, const TimeScale& scale);

}  // namespace osc::gui

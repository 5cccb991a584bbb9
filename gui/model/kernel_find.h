// Find (Ctrl+F): kernels whose name matches a pattern, with duration statistics
// and the hits in time order for stepping through them.
#pragma once

#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

struct FindResult {
    std::vector<EventRef> hits;  // time order across all lanes
    size_t count = 0;
    TimeNs total_ns = 0, min_ns = 0, median_ns = 0, max_ns = 0;
    bool truncated = false;  // more than maxHits matched; statistics still cover all
};

struct FindQuery {
    std::string pattern;  // case-insensitive substring of the demangled or short name
    std::optional<ViewRange> range;  // only kernels starting inside it
    size_t maxHits = 100000;
};

FindResult findKernels(const TimelineModel& model, const FindQuery& query);

}  // namespace osc::gui

// The statistics view: per kernel name (or per signature: name, grid and
// block) the count, total, mean, median, min and max duration and the share
// of the GPU time in scope, with the longest instance to jump to; also
// copies ("memcpy HtoD") and memsets. The scope is the whole capture, a step
// (each device's window of that step) or the selected range; an event is in
// a window when it starts there.
#pragma once

#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <array>
#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

enum class StatsGrouping { Name, Signature };

struct StatsScope {
    // Per device group, the window; empty: every group, the whole capture.
    std::vector<std::pair<int, ViewRange>> windows;
};

struct KernelStatsRow {
    std::string name;
    std::array<uint32_t, 3> grid{}, block{};  // zero unless grouped by signature
    Category category = Category::Compute;
    size_t count = 0;
    TimeNs total = 0, min = 0, median = 0, max = 0;  // median: the lower one, a duration that occurred
    double mean = 0, share = 0;                      // share of the summed duration of every row
    EventRef longest;
};

// Empty when cancelled. Rows by total, largest first.
std::vector<KernelStatsRow> kernelStats(const TimelineModel& model, StatsGrouping grouping, const StatsScope& scope,
                                        const std::atomic<bool>* cancel = nullptr);

}  // namespace osc::gui

// The heat map for many ranks: one row per GPU, one column per time bucket
// of the view (or per step), each cell the overlap ratio (hidden share of the
// communication) or the exposed-communication share of the bucket, so that
// 64 to 1,024 ranks fit on one screen and the odd one out stands out.
// Columns come from the coverage prefix sums, one gallop per bucket edge and
// GPU; rows are computed on several threads.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace osc::gui {

enum class HeatMetric { OverlapRatio, ExposedShare };

struct HeatMap {
    std::vector<int> groups;  // row -> device group, in rank order
    int columns = 0;
    std::vector<float> values;  // row-major; NaN where there is no communication (overlap ratio)
    // Time buckets: columns split `range` evenly. Per step: column c is the
    // c-th step of each device, named stepNames[c], windows per cell.
    ViewRange range;
    bool perStep = false;
    std::vector<std::string> stepNames;
    std::vector<ViewRange> cellWindows;  // per step only, row-major
    // Without a timeline (partial results, a saved report) rows are the
    // analysis's devices, named here; `groups` are then all -1.
    std::vector<std::string> rowLabels;

    float at(int row, int column) const {
        return values[static_cast<size_t>(row) * static_cast<size_t>(columns) + static_cast<size_t>(column)];
    }
    int rows() const { return static_cast<int>(groups.size()); }
    // The time window of a cell.
    ViewRange window(int row, int column) const;
};

HeatMap heatMapByTime(const TimelineModel& model, ViewRange range, int columns, HeatMetric metric);
// The same into `out`, reusing its memory: a view that moves rebuilds the map
// every frame, and fresh megabytes each time cost more in page faults than the sums.
void heatMapByTime(const TimelineModel& model, ViewRange range, int columns, HeatMetric metric, HeatMap& out);
HeatMap heatMapBySteps(const TimelineModel& model, const Analysis& analysis, HeatMetric metric);
// The same from the analysis alone: one row per device, in the analysis's order.
HeatMap heatMapBySteps(const Analysis& analysis, HeatMetric metric);

// The worst of several values for one pixel row when ranks outnumber pixels:
// the lowest overlap ratio, the highest exposed share (NaN only if all are).
float worstOf(float a, float b, HeatMetric metric);

// fn(row) for rows [0, rows), in contiguous blocks on a few threads.
void parallelRows(int rows, const std::function<void(int)>& fn);

}  // namespace osc::gui

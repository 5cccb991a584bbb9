// The heat map for many ranks: one row per GPU, one column per time bucket
// of the view (or per step), each cell the overlap ratio (hidden share of the
// communication), the exposed-communication share of the bucket, or the
// rank's lateness (how long after the median rank it arrived, over the time
// the others waited for it, rank_lateness.h latestIn), so that 64 to 1,024 ranks
// fit on one screen and the odd one out stands out. Columns come from the
// coverage prefix sums, one gallop per bucket edge and GPU; rows are
// computed on several threads.
//
// When ranks outnumber pixel rows, a pixel row shows one of its ranks: the
// one an outlier would be (shownRow): the latest in lateness, else the one
// farthest from the column's median, so a rank that is odd in either
// direction (a late rank waits least: its overlap looks best) survives.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/rank_lateness.h"
#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace osc::gui {

enum class HeatMetric { OverlapRatio, ExposedShare, Lateness };

struct HeatMap {
    std::vector<int> groups;  // row -> device group, in rank order
    int columns = 0;
    // Row-major; NaN where there is no communication (overlap ratio) or no
    // arrival covers the cell (lateness, in ns; rank_lateness.h latestIn).
    std::vector<float> values;
    // The value drawn at full colour: 1 for the shares, the largest lateness
    // in the map (at least 1 ns) for lateness.
    float fullScale = 1;
    int latestRow = -1;  // lateness: the row of the largest value (the first), -1 when no rank is late
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

// Lateness needs `lateness` (of the analysis the model was annotated with);
// without it its cells are NaN.
HeatMap heatMapByTime(const TimelineModel& model, ViewRange range, int columns, HeatMetric metric,
                      const RankLateness* lateness = nullptr);
// The same into `out`, reusing its memory: a view that moves rebuilds the map
// every frame, and fresh megabytes each time cost more in page faults than the sums.
void heatMapByTime(const TimelineModel& model, ViewRange range, int columns, HeatMetric metric, HeatMap& out,
                   const RankLateness* lateness = nullptr);
HeatMap heatMapBySteps(const TimelineModel& model, const Analysis& analysis, HeatMetric metric,
                       const RankLateness* lateness = nullptr);
// The same from the analysis alone: one row per device, in the analysis's order.
HeatMap heatMapBySteps(const Analysis& analysis, HeatMetric metric, const RankLateness* lateness = nullptr);

// The worse of two values: the lower overlap ratio, the higher exposed share
// or lateness (NaN only if both are).
float worstOf(float a, float b, HeatMetric metric);

// Per column, the median of the rows' values (NaN left out; NaN when all
// are), to 1/256 of the full scale: what shownRow measures from. Only
// needed when ranks outnumber pixel rows.
std::vector<float> columnMedians(const HeatMap& h);

// Of rows [r0, r1) in `column`, the one a pixel row standing for them shows:
// for lateness the latest; otherwise the farthest from `median` (the worse
// of two as far); NaN rows only when all are (then r0).
int shownRow(const HeatMap& h, int r0, int r1, int column, float median, HeatMetric metric);

// fn(row) for rows [0, rows), in contiguous blocks on a few threads.
void parallelRows(int rows, const std::function<void(int)>& fn);

}  // namespace osc::gui

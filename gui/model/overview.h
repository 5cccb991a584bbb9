// The overview strip (minimap): the whole capture squeezed into one row of
// columns, each giving, averaged over every GPU, the share of its time that
// ran compute, and of communication hidden and exposed. Built once per width
// from the coverage prefix sums (one gallop per column boundary and GPU).
#pragma once

#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <vector>

namespace osc::gui {

struct OverviewColumn {
    float compute = 0, hidden = 0, exposed = 0;  // shares of the column's time, averaged over GPUs
};

struct Overview {
    ViewRange range;  // what the columns span
    std::vector<OverviewColumn> columns;
};

Overview buildOverview(const TimelineModel& model, ViewRange range, int columns);

}  // namespace osc::gui

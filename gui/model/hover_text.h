// The tooltip under the mouse, as plain text: the event (or the folded block
// of events too small to show) and, on the overlap lane, the collective
// under the cursor with its hidden, exposed and waiting time, not the
// coverage of one pixel.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/time_scale.h"
#include "gui/model/timeline_model.h"

#include <string>

namespace osc::gui {

// `x` is in event-area pixels; `row` the row of the lane under the mouse.
std::string hoverText(const TimelineModel& model, const Analysis* analysis, int lane, int row, const TimeScale& scale,
                      double x);

// The communication operation of the group's device running at `t` (the
// longest when several do), within `toleranceNs` of it, or -1.
int collectiveAt(const TimelineModel& model, const Analysis& analysis, int group, TimeNs t, TimeNs toleranceNs);

}  // namespace osc::gui

// What a click on a rank's one thin row selects (issue 40 part 3: one row
// per rank stays clickable at 1,024 ranks). The row stands for the whole
// device, so a click picks the device's event under the cursor: a
// communication kernel first (a collective, whose instances on the other
// ranks are then outlined), else whatever ran there.
#pragma once

#include "gui/model/timeline_model.h"

namespace osc::gui {

// The event of `group`'s stream lanes at time t (within `toleranceNs`),
// preferring one that contains t, then communication over other work; an
// invalid ref when nothing ran there.
EventRef rankRowHit(const TimelineModel& model, int group, TimeNs t, TimeNs toleranceNs);

}  // namespace osc::gui

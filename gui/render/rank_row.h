// One row per rank (issue 30 item 3c): a device drawn as one thin row. Each
// pixel column is a small stacked bar of the shares of that column the GPU
// spent in compute alone (blue), hiding communication (green), exposing
// transfer (vermilion) and waiting for the last rank (amber): the overlap
// lane's colours plus compute, so 64 ranks on one screen still show where
// each one computes, overlaps and waits.
#pragma once

#include "gui/model/timeline_model.h"
#include "gui/render/draw_list.h"
#include "gui/render/frame_builder.h"

namespace osc::gui {

// Walks the device's coverage prefix sums once per column boundary, as the
// overlap lane does: the work follows the row's width, not its events.
void buildRankRow(const DeviceGroup& group, const Viewport& vp, float y, float h, DrawList& out);

}  // namespace osc::gui

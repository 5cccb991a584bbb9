// The details of one event as (field, value) pairs for the details panel:
// name, duration, stream, grid/block, bytes, correlation, the launching API
// call and, for a collective, its size, bandwidth and instances on other ranks.
#pragma once

#include "gui/model/timeline_model.h"

#include <string>
#include <utility>
#include <vector>

namespace osc::gui {

using DetailList = std::vector<std::pair<std::string, std::string>>;

DetailList eventDetails(const TimelineModel& model, EventRef ref);

}  // namespace osc::gui

// Flow arrows between host and GPU work, drawn for the selected event as
// Nsight Systems and Perfetto draw them: from the API call that launched a
// kernel, copy or memset (same CUPTI correlation id) to that GPU work. A
// selected API call shows where its work ran; a selected operator (cpu_op)
// shows the work of every launch inside it.
#pragma once

#include "gui/model/flow_index.h"
#include "gui/model/timeline_model.h"

#include <vector>

namespace osc::gui {

struct Flow {
    EventRef from, to;  // host API call -> GPU event
};

// Flows of the selected event; at most `limit` (an operator may launch many).
std::vector<Flow> flowsOf(const TimelineModel& model, EventRef ref, size_t limit = 64);

// The correlation id of a GPU event or API call, or 0 when it has none.
uint32_t correlationOf(const TimelineModel& model, EventRef ref);

}  // namespace osc::gui

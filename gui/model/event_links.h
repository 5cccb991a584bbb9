// What Details links to from the selected event, to follow a launch both
// ways as in Nsight Systems: a kernel, copy or memset to the API call that
// launched it and the operator around that call; an API call to the GPU
// work it launched and its operator; an operator to all the GPU work of the
// launches inside it. Clicking a link in Details selects its event.
#pragma once

#include "gui/model/timeline_model.h"

#include <string>
#include <vector>

namespace osc::gui {

struct EventLink {
    std::string field;  // "→ launching call", "→ launched", "→ its operator", "→ GPU work"
    std::string text;   // the linked event: its name, lane and start
    EventRef target;
};

// At most `limit` GPU work links for an operator (it may launch thousands).
std::vector<EventLink> eventLinks(const TimelineModel& model, EventRef ref, size_t limit = 64);

// The innermost CPU operator around a host event (an API call or an
// operator) on its thread's lane, or an invalid ref.
EventRef enclosingOperator(const TimelineModel& model, EventRef ref);

}  // namespace osc::gui

#include "gui/model/event_links.h"

#include "gui/model/event_details.h"
#include "gui/model/flows.h"
#include "gui/model/time_ticks.h"

namespace osc::gui {
namespace {

std::string describe(const TimelineModel& model, EventRef ref) {
    const Lane& lane = model.lane(ref.lane);
    const EventRow& row = lane.rows[static_cast<size_t>(ref.row)];
    return eventLabel(model, lane, row, ref.index) + " · " + lane.label + " · " + formatTimestamp(row.start[ref.index]);
}

}  // namespace

EventRef enclosingOperator(const TimelineModel& model, EventRef ref) {
    if (!ref.valid()) return {};
    const Lane& lane = model.lane(ref.lane);
    if (lane.kind != LaneKind::Host) return {};
    const EventRow& own = lane.rows[static_cast<size_t>(ref.row)];
    const TimeNs t = own.start[ref.index], end = own.end[ref.index];
    // Nesting puts a parent on a row above: the nearest operator there holding it.
    for (int r = ref.row - 1; r >= 0; --r) {
        const EventRow& row = lane.rows[static_cast<size_t>(r)];
        const size_t after = row.gallopToStart(0, t + 1);
        for (size_t i = after; i-- > 0;) {
            if (row.start[i] > t) continue;
            if (row.end[i] >= end && row.source[i] == EventSource::CpuOp) return {ref.lane, r, i};
            if (row.endMaxAt(i) < t) break;  // nothing before reaches t
        }
    }
    return {};
}

std::vector<EventLink> eventLinks(const TimelineModel& model, EventRef ref, size_t limit) {
    std::vector<EventLink> out;
    if (!ref.valid()) return out;
    const Lane& lane = model.lane(ref.lane);
    const EventSource source = lane.rows[static_cast<size_t>(ref.row)].source[ref.index];
    const std::vector<Flow> flows = flowsOf(model, ref, limit);
    const auto add = [&](std::string field, EventRef target) {
        if (target.valid()) out.push_back({std::move(field), describe(model, target), target});
    };
    switch (source) {
        case EventSource::Kernel:
        case EventSource::Copy:
        case EventSource::Memset:
            if (!flows.empty()) {
                add("→ launching call", flows.front().from);
                add("→ its operator", enclosingOperator(model, flows.front().from));
            }
            break;
        case EventSource::ApiCall:
            for (const Flow& f : flows) add("→ launched", f.to);
            add("→ its operator", enclosingOperator(model, ref));
            break;
        case EventSource::CpuOp:
            for (const Flow& f : flows) add("→ GPU work", f.to);
            add("→ inside operator", enclosingOperator(model, ref));
            break;
        default:
            break;
    }
    return out;
}

}  // namespace osc::gui

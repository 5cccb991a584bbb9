#include "gui/model/event_tooltip.h"

#include "gui/model/event_details.h"
#include "gui/model/time_ticks.h"

#include <algorithm>
#include <cstdio>

namespace osc::gui {
namespace {

std::string dims(uint32_t x, uint32_t y, uint32_t z) {
    return std::to_string(x) + "×" + std::to_string(y) + "×" + std::to_string(z);
}

std::string gbps(uint64_t bytes, TimeNs ns) {
    if (ns <= 0) return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, " · %.2f GB/s", static_cast<double>(bytes) / static_cast<double>(ns));
    return buf;
}

// The analysis' operation of a kernel row: collectives are start-sorted, and
// each names its kernel row.
const CollectiveInstance* operationOf(const TimelineModel& model, const Analysis* analysis, int group, uint32_t row,
                                      TimeNs start) {
    const DeviceGroup& g = model.groups()[static_cast<size_t>(group)];
    if (!analysis || g.analysisDevice < 0 || static_cast<size_t>(g.analysisDevice) >= analysis->devices.size())
        return nullptr;
    const auto& ops = analysis->devices[static_cast<size_t>(g.analysisDevice)].collectives;
    auto it = std::lower_bound(ops.begin(), ops.end(), start,
                               [](const CollectiveInstance& c, TimeNs t) { return c.start_ns < t; });
    for (; it != ops.end() && it->start_ns == start; ++it)
        if (it->kernelIndex == row) return &*it;
    return nullptr;
}

std::string launchLine(const TimelineModel& model, int group, uint32_t correlation) {
    const std::string call = launchingCall(model, group, correlation);
    return "correlation " + std::to_string(correlation) + (call == "-" ? std::string() : " · launched by " + call);
}

}  // namespace

std::string eventTooltip(const TimelineModel& model, const Analysis* analysis, EventRef ref) {
    const Lane& lane = model.lane(ref.lane);
    const EventRow& row = lane.rows[static_cast<size_t>(ref.row)];
    const size_t i = ref.index;
    const uint32_t r = row.ref[i];
    const TimeNs dur = row.end[i] - row.start[i];
    std::string text = eventLabel(model, lane, row, i) + " · " + formatDuration(dur, 4);
    const Device* device = lane.kind == LaneKind::Stream ? model.deviceOf(lane.group) : nullptr;
    if (!device) return text;
    switch (row.source[i]) {
        case EventSource::Kernel: {
            const KernelTable& K = device->kernels;
            text += "\nstream " + std::to_string(K.stream[r]) + " · grid " + dims(K.gridX[r], K.gridY[r], K.gridZ[r]) +
                    " · block " + dims(K.blockX[r], K.blockY[r], K.blockZ[r]);
            text += "\n" + launchLine(model, lane.group, K.correlation[r]);
            if (const CollectiveInstance* op = operationOf(model, analysis, lane.group, r, row.start[i])) {
                std::string what = op->collective.empty() ? std::string("communication") : op->collective.str();
                if (op->bytes) what += " · " + formatBytes(*op->bytes);
                if (op->seqNumber) what += " · seq " + std::to_string(*op->seqNumber);
                text += "\n" + what;
            }
            break;
        }
        case EventSource::Copy: {
            const CopyTable& C = device->copies;
            text += "\nstream " + std::to_string(C.stream[r]) + " · " + formatBytes(C.bytes[r]) + gbps(C.bytes[r], dur);
            text += "\n" + launchLine(model, lane.group, C.correlation[r]);
            break;
        }
        case EventSource::Memset: {
            const MemsetTable& S = device->memsets;
            text += "\nstream " + std::to_string(S.stream[r]) + " · " + formatBytes(S.bytes[r]);
            text += "\n" + launchLine(model, lane.group, S.correlation[r]);
            break;
        }
        default:
            break;
    }
    return text;
}

}  // namespace osc::gui

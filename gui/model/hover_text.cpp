#include "gui/model/hover_text.h"

#include "gui/model/event_details.h"
#include "gui/model/event_tooltip.h"
#include "gui/model/time_ticks.h"

#include <algorithm>
#include <cmath>

namespace osc::gui {
namespace {

std::string describe(const CollectiveInstance& c) {
    const std::string_view full = c.name;
    std::string name = c.collective.empty() ? std::string(full.substr(0, full.find('('))) : c.collective.str();
    if (!c.datatype.empty()) name += " " + c.datatype;
    return name;
}

}  // namespace

int collectiveAt(const TimelineModel& model, const Analysis& analysis, int group, TimeNs t, TimeNs toleranceNs) {
    const DeviceGroup& g = model.groups()[static_cast<size_t>(group)];
    if (g.analysisDevice < 0 || static_cast<size_t>(g.analysisDevice) >= analysis.devices.size()) return -1;
    const auto& ops = analysis.devices[static_cast<size_t>(g.analysisDevice)].collectives;
    // Start-sorted: the candidates start before t + tolerance; a short look
    // back finds the ones still running (operations rarely overlap much).
    const auto upto = std::upper_bound(ops.begin(), ops.end(), t + toleranceNs,
                                       [](TimeNs v, const CollectiveInstance& c) { return v < c.start_ns; });
    int best = -1;
    TimeNs bestDist = toleranceNs + 1, bestLen = -1;
    int looked = 0;
    for (auto it = upto; it != ops.begin() && looked < 256; ++looked) {
        --it;
        const TimeNs dist = t < it->start_ns ? it->start_ns - t : t >= it->end_ns ? t - it->end_ns + 1 : 0;
        const TimeNs len = it->end_ns - it->start_ns;
        if (dist < bestDist || (dist == bestDist && len > bestLen)) {
            best = static_cast<int>(it - ops.begin());
            bestDist = dist;
            bestLen = len;
        }
    }
    return best;
}

std::string hoverText(const TimelineModel& model, const Analysis* analysis, int laneIndex, int rowIndex,
                      const TimeScale& scale, double x) {
    const Lane& lane = model.lane(laneIndex);
    const TimeNs t = scale.toTime(x);
    const TimeNs tolerance = static_cast<TimeNs>(std::ceil(3 * scale.nsPerPx()));
    if (lane.kind == LaneKind::Overlap) {
        const DeviceGroup& g = model.groups()[static_cast<size_t>(lane.group)];
        if (g.coverage.comm.total() == 0) return "no communication on this GPU";
        const int c = analysis ? collectiveAt(model, *analysis, lane.group, t, tolerance) : -1;
        if (c < 0) {
            const TimeNs t0 = scale.toTime(std::floor(x)), t1 = scale.toTime(std::floor(x) + 1);
            const TimeNs comm = g.coverage.comm.covered(t0, t1);
            if (comm == 0) return "no communication here";
            return "hidden " + formatDuration(g.coverage.overlap.covered(t0, t1)) + ", exposed " +
                   formatDuration(g.coverage.exposedComm.covered(t0, t1)) + " under this pixel";
        }
        const DeviceAnalysis& d = analysis->devices[static_cast<size_t>(g.analysisDevice)];
        const CollectiveInstance& op = d.collectives[static_cast<size_t>(c)];
        std::string text = describe(op);
        if (op.step >= 0 && static_cast<size_t>(op.step) < d.steps.size())
            text += " in " + d.steps[static_cast<size_t>(op.step)].name;
        text += " · " + formatDuration(op.duration_ns, 4) + ": hidden " + formatDuration(op.overlapped_ns, 4) +
                ", exposed " + formatDuration(op.exposed_ns, 4);
        const TimeNs waiting = g.exposedWait.covered(op.start_ns, op.end_ns);
        if (waiting > 0) text += " (of which waiting for the last rank " + formatDuration(waiting, 4) + ")";
        if (op.bytes) text += " · " + formatBytes(*op.bytes);
        return text;
    }
    if (rowIndex < 0 || static_cast<size_t>(rowIndex) >= lane.rows.size()) return {};
    const EventRow& row = lane.rows[static_cast<size_t>(rowIndex)];
    const size_t i = row.hitTest(t, tolerance);
    // A pipeline stage's stream lanes are shaded where it has no compute.
    const BubbleInterval* bubble =
        lane.kind == LaneKind::Stream ? model.groups()[static_cast<size_t>(lane.group)].bubbles.at(t) : nullptr;
    if (i >= row.size())
        return bubble ? bubbleText(model.groups()[static_cast<size_t>(lane.group)].bubbles, *bubble) : std::string();
    const std::string inBubble = bubble ? std::string("\nin the pipeline bubble (") + bubblePartName(bubble->part) +
                                              " " + formatDuration(bubble->end - bubble->start, 4) +
                                              "): no compute on this stage here"
                                        : std::string();
    const TimeNs dur = row.end[i] - row.start[i];
    if (static_cast<double>(dur) < 2.0 * scale.nsPerPx()) {
        // A folded block: how many events it stands for and how busy it is.
        const double col = std::floor(x);
        const TimeNs t0 = scale.toTime(col), t1 = scale.toTime(col + 1);
        const size_t a = row.gallopToStart(0, t0), b = row.gallopToStart(a, t1);
        if (b - a > 1) {
            const double busy =
                static_cast<double>(row.durationSum(a, b)) / static_cast<double>(std::max<TimeNs>(1, t1 - t0));
            return formatCount(b - a) + " events too small to show, busy " +
                   std::to_string(static_cast<int>(std::lround(std::min(1.0, busy) * 100))) + "%" + inBubble;
        }
    }
    return eventTooltip(model, analysis, {laneIndex, rowIndex, i}) + inBubble;
}

}  // namespace osc::gui

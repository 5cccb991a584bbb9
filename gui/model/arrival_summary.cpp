#include "gui/model/arrival_summary.h"

#include "analyzer/metrics/metric_sum.h"
#include "gui/model/time_ticks.h"

#include <algorithm>

namespace osc::gui {

ArrivalSummary arrivalSummary(const TimelineModel& model, EventRef selected, const std::vector<EventRef>& matches) {
    ArrivalSummary s;
    if (!selected.valid() || matches.empty()) return s;
    std::vector<TimeNs> starts;
    starts.reserve(matches.size() + 1);
    TimeNs latest = INT64_MIN;
    for (size_t k = 0; k <= matches.size(); ++k) {
        const EventRef& ref = k == 0 ? selected : matches[k - 1];
        const Lane& lane = model.lane(ref.lane);
        const TimeNs start = lane.rows[static_cast<size_t>(ref.row)].start[ref.index];
        starts.push_back(start);
        if (start > latest) latest = start, s.lastGroup = lane.group;
    }
    s.ranks = static_cast<int>(starts.size());
    s.median = lowerMedian(starts);
    std::sort(starts.begin(), starts.end());
    s.earliest = starts.front();
    s.latest = starts.back();
    if (!s.summarised()) s.each = std::move(starts);
    return s;
}

std::string arrivalCaption(const TimelineModel& model, const ArrivalSummary& s) {
    if (s.ranks == 0) return "";
    std::string who = "?";
    if (s.lastGroup >= 0) {
        const Process& p = model.processOf(s.lastGroup);
        who = p.rank >= 0 ? "rank " + std::to_string(p.rank) : p.label();
    }
    return std::to_string(s.ranks) + " ranks arrive over " + formatDuration(s.latest - s.earliest) + " · last: " + who +
           ", " + formatDuration(s.latest - s.median) + " after the median";
}

ArrivalMarks arrivalMarks(const ArrivalSummary& s, const TimeScale& scale, double left) {
    ArrivalMarks m;
    m.summarised = s.summarised();
    const auto x = [&](TimeNs t) { return left + scale.toX(t); };
    for (TimeNs t : s.each) m.lines.push_back(x(t));
    if (m.summarised) {
        m.bandFrom = x(s.earliest);
        m.bandTo = x(s.latest);
        m.medianX = x(s.median);
        m.latestX = x(s.latest);
    }
    return m;
}

}  // namespace osc::gui

#include "gui/model/rank_lateness.h"

#include "analyzer/metrics/metric_sum.h"
#include "gui/model/rank_collectives.h"

#include <algorithm>

namespace osc::gui {

RankLateness rankLateness(const Analysis& a) {
    RankLateness out;
    out.byDevice.resize(a.devices.size());
    std::vector<TimeNs> starts;
    for (size_t m = 0; m < a.matched.size(); ++m) {
        const MatchedCollective& mc = a.matched[m];
        starts.clear();
        for (const auto& op : mc.instances)
            if (const CollectiveInstance* c = instanceAt(a, op)) starts.push_back(c->start_ns);
        if (starts.size() < 2) continue;
        const TimeNs median = lowerMedian(starts);
        for (const auto& op : mc.instances) {
            const CollectiveInstance* c = instanceAt(a, op);
            if (!c) continue;
            const Arrival arrival{c->start_ns, c->start_ns - median, c->step, static_cast<int>(m)};
            out.byDevice[static_cast<size_t>(op.first)].push_back(arrival);
            out.latest = std::max(out.latest, arrival.late);
        }
    }
    out.latestOf.assign(a.devices.size(), 0);
    for (size_t d = 0; d < out.byDevice.size(); ++d) {
        auto& arrivals = out.byDevice[d];
        std::sort(arrivals.begin(), arrivals.end(),
                  [](const Arrival& x, const Arrival& y) { return x.start < y.start; });
        for (const Arrival& x : arrivals) out.latestOf[d] = std::max(out.latestOf[d], x.late);
    }
    return out;
}

TimeNs latestIn(const std::vector<Arrival>& arrivals, TimeNs latest, TimeNs from, TimeNs to) {
    // Covers that end at or after `from` and begin before `to`: their starts
    // lie in [from, to + latest), the arrivals sorted by start.
    auto it = std::lower_bound(arrivals.begin(), arrivals.end(), from,
                               [](const Arrival& x, TimeNs t) { return x.start < t; });
    TimeNs out = -1;
    for (; it != arrivals.end() && it->start < to + std::max<TimeNs>(0, latest); ++it) {
        const TimeNs late = std::max<TimeNs>(0, it->late);
        if (it->start - late < to) out = std::max(out, late);
    }
    return out;
}

}  // namespace osc::gui

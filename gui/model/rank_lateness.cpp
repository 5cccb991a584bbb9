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
    for (auto& arrivals : out.byDevice)
        std::sort(arrivals.begin(), arrivals.end(),
                  [](const Arrival& x, const Arrival& y) { return x.start < y.start; });
    return out;
}

TimeNs latestIn(const std::vector<Arrival>& arrivals, TimeNs from, TimeNs to) {
    auto it = std::lower_bound(arrivals.begin(), arrivals.end(), from,
                               [](const Arrival& x, TimeNs t) { return x.start < t; });
    TimeNs latest = -1;
    for (; it != arrivals.end() && it->start < to; ++it) latest = std::max(latest, std::max<TimeNs>(0, it->late));
    return latest;
}

}  // namespace osc::gui

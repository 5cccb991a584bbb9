#include "gui/model/range_metrics.h"

#include "analyzer/metrics/metric_sum.h"

#include <algorithm>

namespace osc::gui {

OverlapMetrics rangeMetrics(const DeviceGroup& g, TimeNs a, TimeNs b) {
    if (b <= a) return {};
    return g.coverage.metrics({a, b});
}

OverlapMetrics rangeMetrics(const TimelineModel& model, const std::vector<int>& groups, TimeNs a, TimeNs b) {
    return selectionMetrics(model, groups, a, b).sum;
}

SelectionMetrics selectionMetrics(const TimelineModel& model, const std::vector<int>& groups, TimeNs a, TimeNs b) {
    SelectionMetrics out;
    std::vector<int> sorted = groups;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    MetricSum sum;
    for (int g : sorted) {
        const DeviceGroup& group = model.groups().at(static_cast<size_t>(g));
        if (group.device < 0) continue;
        const OverlapMetrics m = rangeMetrics(group, a, b);
        out.perDevice.emplace_back(g, m);
        sum.add(m);
    }
    out.sum = sum.total();
    return out;
}

}  // namespace osc::gui

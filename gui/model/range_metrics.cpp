#include "gui/model/range_metrics.h"

#include <algorithm>

namespace osc::gui {

void fillRatios(OverlapMetrics& m) {
    const TimeNs either = m.compute_ns + m.comm_ns - m.overlap_ns;  // |C ∪ M|
    const auto ratio = [](TimeNs num, TimeNs den) -> std::optional<double> {
        if (den <= 0) return std::nullopt;
        return static_cast<double>(num) / static_cast<double>(den);
    };
    m.overlap_ratio = ratio(m.overlap_ns, m.comm_ns);
    m.achieved_speedup = ratio(m.compute_ns + m.comm_ns, either);
    m.ideal_speedup = ratio(m.compute_ns + m.comm_ns, std::max(m.compute_ns, m.comm_ns));
}

OverlapMetrics rangeMetrics(const DeviceGroup& g, TimeNs a, TimeNs b) {
    if (b <= a) return {};
    return g.coverage.metrics({a, b});
}

OverlapMetrics rangeMetrics(const TimelineModel& model, const std::vector<int>& groups, TimeNs a,
                            TimeNs b) {
    return selectionMetrics(model, groups, a, b).sum;
}

SelectionMetrics selectionMetrics(const TimelineModel& model, const std::vector<int>& groups, TimeNs a, TimeNs b) {
    SelectionMetrics out;
    std::vector<int> sorted = groups;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    OverlapMetrics& sum = out.sum;
    for (int g : sorted) {
        const DeviceGroup& group = model.groups().at(static_cast<size_t>(g));
        if (group.device < 0) continue;
        const OverlapMetrics m = rangeMetrics(group, a, b);
        out.perDevice.emplace_back(g, m);
        sum.window_ns += m.window_ns;
        sum.compute_ns += m.compute_ns;
        sum.comm_ns += m.comm_ns;
        sum.overlap_ns += m.overlap_ns;
        sum.exposed_comm_ns += m.exposed_comm_ns;
        sum.busy_ns += m.busy_ns;
        sum.idle_ns += m.idle_ns;
    }
    fillRatios(sum);
    return out;
}

}  // namespace osc::gui

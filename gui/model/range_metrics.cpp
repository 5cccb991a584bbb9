#include "gui/model/range_metrics.h"

#include <algorithm>
#include <climits>

namespace osc::gui {
namespace {

// Times lie within +-2^62 ns, so one device's lengths fit in TimeNs, but
// not their sum over several devices: it saturates, as the report's summary
// does (analysis.cpp), instead of wrapping.
void addSaturating(TimeNs& sum, TimeNs value) {
    if (__builtin_add_overflow(sum, value, &sum)) sum = value < 0 ? INT64_MIN : INT64_MAX;
}

// The ratios in double: compute + comm is up to twice a window and does not
// fit in TimeNs near the limits.
void ratiosFrom(double compute, double comm, double overlap, OverlapMetrics& m) {
    const auto ratio = [](double num, double den) -> std::optional<double> {
        if (den <= 0) return std::nullopt;
        return num / den;
    };
    m.overlap_ratio = ratio(overlap, comm);
    m.achieved_speedup = ratio(compute + comm, compute + comm - overlap);  // over |C ∪ M|
    m.ideal_speedup = ratio(compute + comm, std::max(compute, comm));
}

}  // namespace

void fillRatios(OverlapMetrics& m) {
    ratiosFrom(static_cast<double>(m.compute_ns), static_cast<double>(m.comm_ns), static_cast<double>(m.overlap_ns), m);
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
    double compute = 0, comm = 0, overlap = 0;  // unsaturated, for the ratios
    for (int g : sorted) {
        const DeviceGroup& group = model.groups().at(static_cast<size_t>(g));
        if (group.device < 0) continue;
        const OverlapMetrics m = rangeMetrics(group, a, b);
        out.perDevice.emplace_back(g, m);
        addSaturating(sum.window_ns, m.window_ns);
        addSaturating(sum.compute_ns, m.compute_ns);
        addSaturating(sum.comm_ns, m.comm_ns);
        addSaturating(sum.overlap_ns, m.overlap_ns);
        addSaturating(sum.exposed_comm_ns, m.exposed_comm_ns);
        addSaturating(sum.busy_ns, m.busy_ns);
        addSaturating(sum.idle_ns, m.idle_ns);
        compute += static_cast<double>(m.compute_ns);
        comm += static_cast<double>(m.comm_ns);
        overlap += static_cast<double>(m.overlap_ns);
    }
    ratiosFrom(compute, comm, overlap, sum);
    return out;
}

}  // namespace osc::gui

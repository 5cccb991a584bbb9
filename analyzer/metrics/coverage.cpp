#include "analyzer/metrics/coverage.h"

#include <algorithm>

namespace osc {

void OverlapMetrics::computeRatios(TimeNs computeOrComm_ns) {
    const auto ratio = [](double num, TimeNs den) -> std::optional<double> {
        if (den <= 0) return std::nullopt;
        return num / static_cast<double>(den);
    };
    // compute + comm may exceed INT64_MAX (each can cover a window of almost
    // 2^63 ns, and a summary saturates at INT64_MAX): added as doubles,
    // which are exact up to 2^53 ns (104 days).
    const double both = static_cast<double>(compute_ns) + static_cast<double>(comm_ns);
    overlap_ratio = ratio(static_cast<double>(overlap_ns), comm_ns);
    achieved_speedup = ratio(both, computeOrComm_ns);
    ideal_speedup = ratio(both, std::max(compute_ns, comm_ns));
}

OverlapMetrics DeviceCoverage::metrics(Interval w) const {
    OverlapMetrics m;
    if (w.empty()) return m;
    m.window_ns = w.length();
    m.compute_ns = compute.covered(w);
    m.comm_ns = comm.covered(w);
    m.overlap_ns = overlap.covered(w);
    m.exposed_comm_ns = m.comm_ns - m.overlap_ns;
    m.busy_ns = busy.covered(w);
    m.idle_ns = m.window_ns - m.busy_ns;
    m.computeRatios(computeOrComm.covered(w));
    return m;
}

DeviceCoverage buildDeviceCoverage(const Device& device, ActivityClassifier& classifier) {
    IntervalSetBuilder builders[3];  // indexed by Category
    TimeNs lo = 0, hi = 0;
    bool any = false;
    const auto add = [&](Category c, TimeNs s, TimeNs e) {
        if (e <= s) return;
        builders[static_cast<int>(c)].add(s, e);
        if (!any) {
            lo = s;
            hi = e;
            any = true;
        }
        lo = std::min(lo, s);
        hi = std::max(hi, e);
    };
    const auto& k = device.kernels;
    for (size_t i = 0; i < k.size(); ++i) add(classifier.kernel(kernelNameId(k, i)), k.start[i], k.end[i]);
    const auto& c = device.copies;
    for (size_t i = 0; i < c.size(); ++i)
        add(classifier.copy(i < c.copyKind.size() ? c.copyKind[i] : CopyKind::Unknown), c.start[i], c.end[i]);
    const auto& m = device.memsets;
    for (size_t i = 0; i < m.size(); ++i) add(ActivityClassifier::memset(), m.start[i], m.end[i]);

    IntervalSet C = builders[static_cast<int>(Category::Compute)].finish();
    IntervalSet M = builders[static_cast<int>(Category::Communication)].finish();
    IntervalSet X = builders[static_cast<int>(Category::Memory)].finish();
    DeviceCoverage cov;
    IntervalSet CM = unite(C, M);
    cov.busy = CoverageIndex(unite(CM, X));
    cov.computeOrComm = CoverageIndex(std::move(CM));
    cov.overlap = CoverageIndex(intersect(C, M));
    cov.exposedComm = CoverageIndex(subtract(M, C));
    cov.compute = CoverageIndex(std::move(C));
    cov.comm = CoverageIndex(std::move(M));
    cov.memory = CoverageIndex(std::move(X));
    if (any) cov.span = {lo, hi};
    return cov;
}

DeviceCoverage buildDeviceCoverage(const Capture& capture, const Device& device, const AnalysisSettings& settings) {
    ActivityClassifier classifier(capture.strings, settings);
    return buildDeviceCoverage(device, classifier);
}

}  // namespace osc

#include "analyzer/metrics/metric_sum.h"

#include <algorithm>

namespace osc {

void MetricSum::add(const OverlapMetrics& m) {
    sum_.window_ns = saturatingAdd(sum_.window_ns, m.window_ns);
    sum_.compute_ns = saturatingAdd(sum_.compute_ns, m.compute_ns);
    sum_.comm_ns = saturatingAdd(sum_.comm_ns, m.comm_ns);
    sum_.overlap_ns = saturatingAdd(sum_.overlap_ns, m.overlap_ns);
    sum_.exposed_comm_ns = saturatingAdd(sum_.exposed_comm_ns, m.exposed_comm_ns);
    sum_.busy_ns = saturatingAdd(sum_.busy_ns, m.busy_ns);
    sum_.idle_ns = saturatingAdd(sum_.idle_ns, m.idle_ns);
    // |C ∪ M| < 2^63 for one window; compute + comm first might not be.
    computeOrComm_ = saturatingAdd(computeOrComm_, (m.compute_ns - m.overlap_ns) + m.comm_ns);
}

OverlapMetrics MetricSum::total() const {
    OverlapMetrics out = sum_;
    out.computeRatios(computeOrComm_);
    return out;
}

TimeNs lowerMedian(std::vector<TimeNs> values) { return lowerMedianInPlace(values.begin(), values.end()); }

}  // namespace osc

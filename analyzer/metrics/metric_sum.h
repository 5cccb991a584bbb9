// Sums and medians that the report, the merge of ranks and the GUI take the
// same way, so that "all devices" means one thing everywhere.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <algorithm>
#include <vector>

namespace osc {

// The section 4 metrics of several windows (devices, or one range on each
// device) as one: the ns fields added, the ratios from the sums. Each
// device's times fit in TimeNs (they lie within +-2^62 ns); their sum over
// many devices need not, and saturates instead of wrapping.
class MetricSum {
public:
    void add(const OverlapMetrics& m);
    // The sums, with the ratios of OverlapMetrics::computeRatios over them.
    OverlapMetrics total() const;

private:
    OverlapMetrics sum_;
    TimeNs computeOrComm_ = 0;  // |C ∪ M| summed: compute + comm - overlap per window
};

// The lower median, the ((n - 1) / 2)-th smallest value: a value that
// occurred, never an average of two. `values` must not be empty.
TimeNs lowerMedian(std::vector<TimeNs> values);
// The same of [first, last) (not empty), found in place: the range is reordered.
template <typename It>
auto lowerMedianInPlace(It first, It last) {
    const It at = first + (last - first - 1) / 2;
    std::nth_element(first, at, last);
    return *at;
}

}  // namespace osc

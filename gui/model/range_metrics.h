// docs/design.md section 4 metrics for an arbitrary time range, answered from a
// device group's coverages in O(log n) so a drag selection can refresh them
// on every mouse move. One device's numbers come from the analyzer's
// DeviceCoverage::metrics and several devices' from its MetricSum, so they
// equal what `overlapscope report` prints for the same windows.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/timeline_model.h"

#include <vector>

namespace osc::gui {

// Metrics of one device over the window [a, b).
OverlapMetrics rangeMetrics(const DeviceGroup& group, TimeNs a, TimeNs b);

// Summed over several groups as the report's "summary" sums devices
// (MetricSum: ns added, saturating where the sum does not fit in TimeNs;
// the ratios from those sums).
OverlapMetrics rangeMetrics(const TimelineModel& model, const std::vector<int>& groups, TimeNs a, TimeNs b);

// A selection over several devices: each device's own metrics, and their sum
// (labelled as a sum wherever it is shown: ns of several GPUs added up).
struct SelectionMetrics {
    std::vector<std::pair<int, OverlapMetrics>> perDevice;  // (group, metrics), in group order
    OverlapMetrics sum;
};
SelectionMetrics selectionMetrics(const TimelineModel& model, const std::vector<int>& groups, TimeNs a, TimeNs b);

}  // namespace osc::gui

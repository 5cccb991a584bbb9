// Why communication is exposed: the bottleneck bucket of a window and the
// findings that explain exposed time (docs/design.md section 4, "Bottleneck").
#pragma once

#include "analyzer/metrics/coverage.h"

#include <string>
#include <vector>

namespace osc {

// What a window's explanation needs; ops are the device's operations and
// opIndices those that belong to the window (a step's own, or all of them).
struct WindowContext {
    Interval window;
    const OverlapMetrics& metrics;
    const DeviceCoverage& coverage;
    const std::vector<CollectiveInstance>& ops;
    const std::vector<size_t>& opIndices;
    const std::vector<uint32_t>& computeStreams;  // sorted
    const AnalysisSettings& settings;
};

// "1.250 ms", "830.0 us", "12 ns": durations in finding messages.
std::string findingDuration(TimeNs ns);
// "rank 3 gpu 3", or "host:pid gpu 0" without a rank: devices in finding messages.
std::string findingDevice(const DeviceAnalysis& device);
std::string findingDevice(int rank, const std::string& host, int64_t pid, uint32_t device);
// "a", "a and b", "a, b and c": lists in messages.
std::string listInWords(const std::vector<std::string>& parts);
// Inserts a finding, keeping the list largest exposed time first.
void addFinding(std::vector<Finding>& findings, Finding finding);

// Sorted ids of the streams that run at least one compute kernel.
std::vector<uint32_t> computeStreamsOf(const Device& device, ActivityClassifier& classifier);

// The part of an operation inside the window that compute does not hide.
TimeNs exposedWithin(const CollectiveInstance& op, Interval window, const DeviceCoverage& cov);

// Findings, largest exposed time first.
std::vector<Finding> explainWindow(const WindowContext& ctx);

// Bottleneck bucket, its share of exposed time, verdict and findings.
Bottleneck bottleneckOf(const WindowContext& ctx);

}  // namespace osc

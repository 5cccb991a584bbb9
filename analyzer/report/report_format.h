// Words and numbers shared by the text and Markdown reports (and `check`):
// how a device is named, how durations and ratios are printed, and which
// collective is the bottleneck of a device.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>
#include <string>

namespace osc::report {

// "rank 0 gpu 1", or "host:pid gpu 1" when the rank is unknown.
std::string deviceLabel(const DeviceAnalysis& device);
// "14.2 ms", "3.10 ms", "850 us", "1.25 s", "120 ns".
std::string formatDuration(TimeNs ns);
// "62%" (whole percent), "n/a" when absent.
std::string formatPercent(std::optional<double> ratio);
// "1.47x", "n/a" when absent.
std::string formatFactor(std::optional<double> value);
// "32.0 MiB", "512 B", "n/a".
std::string formatBytes(std::optional<uint64_t> bytes);
// "AllReduce f32", or the kernel name when the collective type is unknown.
std::string describeCollective(const CollectiveInstance& c);
// "compute-bound", "communication-bound", or "no communication".
std::string verdict(const OverlapMetrics& m);
// A step's verdict as every report and the GUI print it: communication-bound
// when the bottleneck analysis says so, else verdict(step.metrics).
std::string stepVerdict(const StepAnalysis& step);
std::string toString(FindingKind kind);  // "comm-on-compute-stream", ...
// Throws std::invalid_argument for an unknown name.
FindingKind parseFindingKind(const std::string& name);
// "transfer", "duration"; "" for None (the report JSON's null).
std::string toString(BusBwBasis basis);

// A device's bottleneck over all its steps: the collective position within a
// step ("bucket #k", 0-based issue order, which is DDP's bucket index) whose
// exposed time summed over steps is largest. Without steps: the single
// collective with the most exposed time.
struct DeviceBottleneck {
    bool found = false;
    std::string label;    // "AllReduce f32 bucket #2" or "AllReduce f32 #41"
    int position = -1;    // bucket position within a step, -1 without steps
    int collective = -1;  // a representative index into DeviceAnalysis::collectives
    TimeNs exposed_ns = 0;
    std::optional<double> share;  // of the device's exposed communication
};
DeviceBottleneck deviceBottleneck(const DeviceAnalysis& device);

// The one-line verdict that starts every report: "rank 0 gpu 0: 62% of
// communication hidden, 14.2 ms exposed of 37.5 ms; compute-bound;
// bottleneck: AllReduce f32 bucket #7 (3.1 ms exposed, 41%)".
std::string headline(const DeviceAnalysis& device);
// The same over all devices: "all 8 devices: 58% of communication hidden, ...".
std::string summaryHeadline(const Analysis& analysis);
std::string summaryHeadline(size_t deviceCount, const OverlapMetrics& summary);

}  // namespace osc::report

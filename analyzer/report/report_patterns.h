// The parallelism patterns of docs/metrics.md sections 7d-7f in reports:
// point-to-point pairs, the pipeline bubble per stage, all-to-all balance.
// Shared by the text and Markdown reports, `check` and `diff`.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/text_table.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::report {

// The pipeline over all devices: ns summed, shares from the sums; nullopt
// when no device ran a pipeline.
std::optional<PipelineStageMetrics> pipelineSummary(const Analysis& a);
std::optional<PipelineStageMetrics> pipelineSummary(const std::vector<DeviceAnalysis>& devices);

// The step with the largest all-to-all imbalance (bytes when known, else
// time), or nullptr; `value` gets that imbalance.
const AllToAllStep* worstAllToAll(const Analysis& a, double* value = nullptr);
const AllToAllStep* worstAllToAll(const std::vector<AllToAllStep>& alltoall, double* value = nullptr);
// The imbalance a step is judged by: bytes when known, else time.
std::optional<double> alltoallImbalance(const AllToAllStep& step);

// Exposed all-to-all time summed over devices; nullopt when there is none.
std::optional<TimeNs> exposedAllToAll(const Analysis& a);
std::optional<TimeNs> exposedAllToAll(const std::vector<DeviceAnalysis>& devices);

// "rank 3 gpu 3" for a device index of the analysis ("device 7" when out of range).
std::string deviceName(const Analysis& a, int device);
std::string deviceName(const std::vector<DeviceAnalysis>& devices, int device);

// The report's lines and tables take the job-level lists and the devices
// apart: the device indexes in the lists name `devices`, of which only the
// identity and the pipeline and all-to-all totals are read, so a report
// made device by device passes slim copies (report_assembler.h).

// Lines for the report (without a leading indent); empty when the pattern is absent.
std::vector<std::string> pipelineLines(const std::vector<PipelineStep>& pipeline,
                                       const std::vector<DeviceAnalysis>& devices);
std::vector<std::string> alltoallLines(const std::vector<AllToAllStep>& alltoall,
                                       const std::vector<DeviceAnalysis>& devices);
std::vector<std::string> p2pLines(const std::vector<P2pTransfer>& p2p);

// Per stage over the capture: bubble, share, theory, fill, drain, stall.
TextTable pipelineTable(const std::vector<PipelineStep>& pipeline, const std::vector<DeviceAnalysis>& devices);
// Per step: dispatches, imbalance (bytes, time), overloaded rank, exposed.
TextTable alltoallTable(const std::vector<AllToAllStep>& alltoall, const std::vector<DeviceAnalysis>& devices,
                        size_t top);

}  // namespace osc::report

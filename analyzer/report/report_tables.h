// The tables the text and Markdown reports share; each renders them its own way.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/text_table.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace osc::report {

// One row per device plus a summary row when there are several. Of each
// device only its identity and totals are read.
TextTable totalsTable(const std::vector<DeviceAnalysis>& devices, const OverlapMetrics& summary);
TextTable stepsTable(const DeviceAnalysis& d);
// The `top` collectives with the most exposed time (0 = all), most exposed first.
TextTable collectivesTable(const DeviceAnalysis& d, size_t top);
// docs/design.md 4d: the device's lower medians per collective and size
// class (bus bytes of at least the size shown, under twice it).
TextTable busBandwidthTable(const DeviceAnalysis& d);
// What the matched-collectives table shows of one: the instances only
// counted, since a job of many ranks lists one per rank.
struct MatchedRow {
    std::string collective;
    std::optional<uint64_t> seqNumber;
    size_t ranks = 0;
    TimeNs skew_ns = 0, transfer_ns = 0;
};
MatchedRow matchedRow(const MatchedCollective& m);
// Multi-rank: the `top` rows with the largest skew; `rows` in the job's
// matched order, which breaks ties.
TextTable matchedTable(const std::vector<MatchedRow>& rows, size_t top);

// A finding as the reports tell it: device findings as they are; step
// findings of a kind the device list lacks, told once with the number of
// steps they were seen in and their exposed time summed.
struct ReportedFinding {
    Finding finding;
    int steps = 0;  // 0 = a device finding
};
std::vector<ReportedFinding> deviceFindings(const DeviceAnalysis& d);
// One line: the message, plus "(seen in 5 steps; 20.4 ms exposed in total)"
// for step findings.
std::string describeFinding(const ReportedFinding& f);

}  // namespace osc::report

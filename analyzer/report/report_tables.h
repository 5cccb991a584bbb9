// The tables the text and Markdown reports share; each renders them its own way.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/text_table.h"

#include <cstddef>
#include <vector>

namespace osc::report {

// One row per device plus a summary row when there are several.
TextTable totalsTable(const Analysis& a);
TextTable stepsTable(const DeviceAnalysis& d);
// The `top` collectives with the most exposed time (0 = all), most exposed first.
TextTable collectivesTable(const DeviceAnalysis& d, size_t top);
// Multi-rank: the `top` matched collectives with the largest skew.
TextTable matchedTable(const Analysis& a, size_t top);

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

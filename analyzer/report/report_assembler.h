// The text and Markdown reports made from devices that arrive one at a time,
// in order, each dropped by its caller once seen: the merge of a job of
// many ranks (analyzer/partial) never holds the job's devices together, and
// neither need its report. Each device's own parts (headline, findings,
// cost sentences, and its --interference, --steps and --collectives
// tables) are rendered as it arrives; of the device only a slim copy stays
// for the parts over all devices (the totals table, the straggler and the
// pipeline and all-to-all lines). formatTextReport and formatMarkdownReport
// are this class fed from an Analysis in memory, so each report is made one
// way only.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_layout.h"
#include "analyzer/report/report_options.h"

#include <string>
#include <vector>

namespace osc::report {

enum class ReportFormat { Text, Markdown };

class ReportAssembler {
public:
    ReportAssembler(ReportFormat format, ReportOptions options);

    // Devices in order 0, 1, ...: the device indexes of the job-level lists
    // (pipeline, all-to-all) name them in that order.
    void addDevice(const DeviceAnalysis& device);
    // After the last device, in the job's matched order.
    void addMatched(const MatchedCollective& matched);
    // The report. `rest` gives the job-level results (summary, spread, total
    // skew, point-to-point, pipeline and all-to-all steps); its devices and
    // matched collectives are not read, so crossrank::Engine::rest() will do.
    std::string finish(const Analysis& rest) const;

private:
    ReportFormat format_;
    ReportOptions options_;
    DeviceSections sections_;
    std::vector<DeviceAnalysis> devices_;  // jobLevelCopy of each
    size_t matchedCount_ = 0;
    // Only the text report's --collectives lists matched collectives, and
    // only its --top most skewed: those rows, in matched order.
    bool keepsMatched_ = false;
    std::vector<MatchedRow> matched_;
};

// What the parts of a report over all devices read of a device: identity,
// totals, last arrivals and the delay they caused and why (its straggler
// record), pipeline and all-to-all totals. No steps, collectives, findings or
// signatures.
DeviceAnalysis jobLevelCopy(const DeviceAnalysis& device);

}  // namespace osc::report

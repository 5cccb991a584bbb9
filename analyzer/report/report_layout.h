// How the text and the Markdown report lay out what ReportAssembler collects:
// each format's file (report_text.cpp, report_markdown.cpp) renders a
// device's own sections when it arrives and puts the report together at the
// end. Internal to analyzer/report.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_options.h"
#include "analyzer/report/report_tables.h"

#include <string>
#include <vector>

namespace osc::report {

// Each section's text over the devices seen so far, in device order.
struct DeviceSections {
    std::string headlines, findings, costs, interference, steps, collectives;
};

// What is left of the job once every device has passed.
struct JobParts {
    const Analysis& rest;                        // job-level results; devices and matched unread
    const std::vector<DeviceAnalysis>& devices;  // jobLevelCopy of each, in order
    size_t matchedCount = 0;
    const std::vector<MatchedRow>& matched;  // the rows matchedTable may show, in matched order
};

void addTextSections(const DeviceAnalysis& device, const ReportOptions& options, DeviceSections& out);
std::string textReport(const DeviceSections& sections, const JobParts& job, const ReportOptions& options);

void addMarkdownSections(const DeviceAnalysis& device, const ReportOptions& options, DeviceSections& out);
std::string markdownReport(const DeviceSections& sections, const JobParts& job, const ReportOptions& options);

}  // namespace osc::report

// A Markdown report sized for a pull-request comment: the verdict, one table
// of devices, findings, and optionally step and collective tables.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_options.h"

#include <string>

namespace osc::report {

std::string formatMarkdownReport(const Analysis& analysis, const ReportOptions& options);

}  // namespace osc::report

// The terminal report: verdict lines first, then the totals table, findings,
// and optionally steps, collectives and the multi-rank view.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_options.h"

#include <string>

namespace osc::report {

std::string formatTextReport(const Analysis& analysis, const ReportOptions& options);

}  // namespace osc::report

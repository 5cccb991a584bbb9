// The stable report JSON (DESIGN.md section 5, "format":"overlapscope-report",
// "version":1) and a reader for it, so `check --baseline` and `diff` can
// compare a capture with a report saved earlier.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_options.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace osc::report {

inline constexpr int kReportVersion = 1;

// Pretty-printed (2-space indent) with a trailing newline. Written piece by
// piece, so memory does not grow with the size of the document.
void writeJsonReport(std::ostream& out, const Analysis& analysis, const ReportOptions& options);
std::string formatJsonReport(const Analysis& analysis, const ReportOptions& options);

// A report read back: the analysis as far as the JSON holds it (collective
// kernel indexes and process indexes are not stored and come back as -1/0).
struct ReportFile {
    int version = kReportVersion;
    std::vector<std::string> inputs;
    Analysis analysis;
};

// Throws CaptureError(path, problem) when the file is unreadable, not JSON,
// not an overlapscope report, or of a newer version.
ReportFile readReportJson(const std::string& path);
// `origin` names the text in error messages.
ReportFile parseReportJson(const std::string& text, const std::string& origin);

}  // namespace osc::report

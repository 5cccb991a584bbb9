// The stable report JSON (docs/design.md section 5, "format":"overlapscope-report",
// "version":1) and a reader for it, so `check --baseline` and `diff` can
// compare a capture with a report saved earlier.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_options.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace osc::report {

inline constexpr int kReportVersion = 1;

// Pretty-printed (2-space indent) with a trailing newline. Written piece by
// piece, so memory does not grow with the size of the document.
void writeJsonReport(std::ostream& out, const Analysis& analysis, const ReportOptions& options);
std::string formatJsonReport(const Analysis& analysis, const ReportOptions& options);
// The same bytes, the devices' objects (nearly all of a large report)
// rendered on `threads` threads a few devices ahead of the one written; of
// fewer devices than threads, each device's collectives so.
void writeJsonReportOnThreads(std::ostream& out, const Analysis& analysis, const ReportOptions& options, int threads);

// One element of "devices", exactly as writeJsonReport writes it, its
// opening brace where the caller's stream is and its inner lines indented
// `indent` + 2 spaces; with a negative indent on one line, without spaces.
// Its collectives, where many, rendered on `threads` threads.
void writeDeviceJson(std::ostream& out, const DeviceAnalysis& device, int indent, int threads = 1);

// A device's "busbw" and "straggler" objects (docs/design.md 4d) as compact
// JSON text, "null" when absent: the merge of partial results puts them into
// a device object written before they were known.
std::string busBandwidthJsonText(const std::optional<BusBandwidth>& busbw);
std::string stragglerJsonText(const std::optional<StragglerMetrics>& straggler);

// The same document with its devices and matched collectives produced by the
// caller, one at a time and in order (analyzer/partial's merge, which never
// holds a job's devices in memory). `rest` gives everything else: settings,
// summary, total skew, spread, dropped records, warnings; its own devices
// and matched lists are not read.
struct StreamedReportBody {
    size_t deviceCount = 0;
    // Writes device `index` as writeDeviceJson would; called for 0, 1, ...
    std::function<void(std::ostream& out, int indent, size_t index)> writeDevice;
    size_t matchedCount = 0;
    // Called for 0, 1, ... after the last device.
    std::function<MatchedCollective(size_t index)> matched;
};
void writeJsonReport(std::ostream& out, const Analysis& rest, const ReportOptions& options,
                     const StreamedReportBody& body);

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
// From this size on, the elements of "devices" are parsed apart from the
// rest of the document, on several threads (json_member_spans.h): a report
// of 100,000 devices read as one document took minutes and 4 GB.
inline constexpr size_t kSplitReportBytes = size_t{1} << 20;
// One element of "devices" read back as parseReportJson reads it
// (processIndex 0, collectives' kernelIndex -1). Throws CaptureError.
DeviceAnalysis parseDeviceJson(const std::string& text, const std::string& origin);

}  // namespace osc::report

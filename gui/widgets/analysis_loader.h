// Files that hold an analysis but no trace: partial results (`report
// --partial`, one file, several, or a directory of them: one job) and saved
// reports (`report --format json`). The window shows their tables without a
// timeline.
//
// openedKind() asks the library's input sniffer (analyzer/load/input_kind.h)
// what a path is; loadAnalysisOnly() runs the library's job
// (analyzer/job/job.h) for the analysis-only kinds, as the CLI does.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>

namespace osc::gui {

enum class OpenedKind {
    Capture,         // anything loadCapture reads: a timeline and an analysis
    PartialResults,  // a partial result file, or a directory holding only partials
    SavedReport,     // {"format": "overlapscope-report", ...}
};

// What `path` holds, by its first bytes (a directory: by the files in it).
// Anything that is neither a partial nor a report is left to the capture
// reader, whose error names the file when it is not a capture either.
OpenedKind openedKind(const QString& path);

struct AnalysisOnly {
    std::shared_ptr<const Analysis> analysis;
    QStringList inputs;    // the captures the results were made from, as recorded in the files
    int partialFiles = 0;  // partial files merged (0 for a saved report)
};

// The Analysis of a partial result, a directory of them or a saved report.
// Partials are merged as `overlapscope merge --align` does: on collectives
// when `alignCollectives`, else on session starts, so that the window's
// View > Align check says what is shown whatever the partials were made
// with. A saved report is shown as it was saved. Throws
// CaptureError naming the file, std::exception (the caller adds the path) or
// LoadCancelled.
AnalysisOnly loadAnalysisOnly(const QString& path, OpenedKind kind, bool alignCollectives,
                              const std::atomic<bool>* cancel,
                              const std::function<void(double, const QString&)>& progress);

// "Saved report (overlapscope-report JSON)", "Partial results (4 files merged)".
QString openedKindTitle(OpenedKind kind, int partialFiles);

}  // namespace osc::gui

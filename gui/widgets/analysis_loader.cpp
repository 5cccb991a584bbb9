#include "gui/widgets/analysis_loader.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/job/job.h"
#include "analyzer/load/input_kind.h"

#include <QObject>

#include <algorithm>

namespace osc::gui {

OpenedKind openedKind(const QString& path) {
    try {
        switch (sniff(path.toStdString())) {
            case InputKind::PartialResult:
            case InputKind::PartialDirectory:
                return OpenedKind::PartialResults;
            case InputKind::SavedReport:
                return OpenedKind::SavedReport;
            default:
                return OpenedKind::Capture;
        }
    } catch (const CaptureError&) {
        return OpenedKind::Capture;  // missing or special: the capture reader names the problem
    }
}

AnalysisOnly loadAnalysisOnly(const QString& path, OpenedKind kind, bool alignCollectives,
                              const std::atomic<bool>* cancel,
                              const std::function<void(double, const QString&)>& progress) {
    const auto tell = [&](double fraction, const QString& stage) {
        if (progress) progress(fraction, stage);
    };
    job::JobProgress jobProgress;
    jobProgress.cancel = cancel;
    jobProgress.counted = [&](std::string_view verb, size_t done, size_t total) {
        const double part = static_cast<double>(done) / static_cast<double>(std::max<size_t>(total, 1));
        if (verb == "reading")
            tell(0.3 * part, QObject::tr("reading partial results (%1 of %2)").arg(done).arg(total));
        else
            tell(0.3 + 0.7 * part, QObject::tr("merging (%1 of %2 devices)").arg(done).arg(total));
    };
    tell(0.0, kind == OpenedKind::SavedReport ? QObject::tr("reading the saved report")
                                              : QObject::tr("reading partial results"));
    const job::JobInputs inputs = job::classifyJob({path.toStdString()});
    job::JobRequest request;
    // The window's View > Align check says what is shown, whatever the
    // partials were made with; a saved report is shown as it was saved.
    request.align = alignCollectives;
    std::vector<std::string> madeFrom;
    AnalysisOnly out;
    out.analysis = std::make_shared<const Analysis>(job::analyzeJob(inputs, request, jobProgress, &madeFrom));
    if (cancel && cancel->load()) throw LoadCancelled{};
    for (const std::string& input : madeFrom) out.inputs << QString::fromStdString(input);
    if (inputs.kind == job::JobKind::Partials) out.partialFiles = static_cast<int>(inputs.paths.size());
    return out;
}

QString openedKindTitle(OpenedKind kind, int partialFiles) {
    switch (kind) {
        case OpenedKind::SavedReport:
            return QObject::tr("Saved report (overlapscope-report JSON)");
        case OpenedKind::PartialResults:
            return partialFiles > 1
                       ? QObject::tr("Partial results (overlapscope-partial, %1 files merged)").arg(partialFiles)
                       : QObject::tr("Partial result (overlapscope-partial)");
        case OpenedKind::Capture:
            break;
    }
    return QObject::tr("Capture");
}

}  // namespace osc::gui

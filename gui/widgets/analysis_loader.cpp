#include "gui/widgets/analysis_loader.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/merge.h"
#include "analyzer/partial/part_set.h"
#include "analyzer/partial/partial_format.h"
#include "analyzer/report/report_json.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QRegularExpression>

#include <algorithm>

namespace osc::gui {
namespace {

// The partial result files directly in `dir`, in byte order of their names
// (the order `overlapscope merge DIR` reads them in).
QStringList partialFilesIn(const QString& dir) {
    const QDir d(dir);
    QStringList names = d.entryList({QStringLiteral("*") + partial::kPartialSuffix}, QDir::Files | QDir::CaseSensitive, QDir::Unsorted);
    std::sort(names.begin(), names.end());
    QStringList out;
    for (const QString& name : names) out << d.filePath(name);
    return out;
}

}  // namespace

OpenedKind openedKind(const QString& path) {
    const QFileInfo info(path);
    const std::string p = path.toStdString();
    if (info.isDir()) {
        // Agents leave partials beside their captures: only a directory with
        // nothing else to read is a job of partials.
        if (partialFilesIn(path).isEmpty()) return OpenedKind::Capture;
        try {
            return captureFiles({p}).empty() ? OpenedKind::PartialResults : OpenedKind::Capture;
        } catch (const CaptureError&) {  // "holds no capture files"
            return OpenedKind::PartialResults;
        }
    }
    if (!info.isFile()) return OpenedKind::Capture;  // missing or special: the capture reader names the problem
    if (partial::looksLikePartial(p)) return OpenedKind::PartialResults;
    // Our report writer puts "format" first; a Kineto trace never has it there.
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return OpenedKind::Capture;
    static const QRegularExpression kReportHead(QStringLiteral(R"(\A\s*\{\s*"format"\s*:\s*"overlapscope-report")"));
    return kReportHead.match(QString::fromUtf8(file.read(256))).hasMatch() ? OpenedKind::SavedReport : OpenedKind::Capture;
}

AnalysisOnly loadAnalysisOnly(const QString& path, OpenedKind kind, bool alignCollectives,
                              const std::atomic<bool>* cancel,
                              const std::function<void(double, const QString&)>& progress) {
    const auto tell = [&](double fraction, const QString& stage) {
        if (progress) progress(fraction, stage);
    };
    const auto stopIfCancelled = [&] {
        if (cancel && cancel->load()) throw LoadCancelled{};
    };
    AnalysisOnly out;
    if (kind == OpenedKind::SavedReport) {
        tell(0.0, QObject::tr("reading the saved report"));
        report::ReportFile file = report::readReportJson(path.toStdString());
        stopIfCancelled();
        for (const std::string& input : file.inputs) out.inputs << QString::fromStdString(input);
        out.analysis = std::make_shared<const Analysis>(std::move(file.analysis));
        return out;
    }
    const QStringList files = QFileInfo(path).isDir() ? partialFilesIn(path) : QStringList{path};
    partial::PartSet set;
    for (qsizetype i = 0; i < files.size(); ++i) {
        stopIfCancelled();
        tell(0.3 * static_cast<double>(i) / static_cast<double>(files.size()),
             QObject::tr("reading partial results (%1 of %2)").arg(i + 1).arg(files.size()));
        set.addPartialFile(files[i].toStdString());
    }
    partial::MergeOptions options;
    options.alignCollectives = alignCollectives;
    // The merge has no cancel flag of its own; its progress callback, called
    // after each device, is where it can be stopped.
    options.progress = [&](size_t done, size_t total) {
        stopIfCancelled();
        tell(0.3 + 0.7 * static_cast<double>(done) / static_cast<double>(std::max<size_t>(total, 1)),
             QObject::tr("merging (%1 of %2 devices)").arg(done).arg(total));
    };
    tell(0.3, QObject::tr("merging"));
    out.analysis = std::make_shared<const Analysis>(partial::mergedAnalysis(set, options));
    stopIfCancelled();
    for (const std::string& input : set.inputs) out.inputs << QString::fromStdString(input);
    out.partialFiles = static_cast<int>(files.size());
    return out;
}

QString openedKindTitle(OpenedKind kind, int partialFiles) {
    switch (kind) {
        case OpenedKind::SavedReport: return QObject::tr("Saved report (overlapscope-report JSON)");
        case OpenedKind::PartialResults:
            return partialFiles > 1 ? QObject::tr("Partial results (overlapscope-partial, %1 files merged)").arg(partialFiles)
                                    : QObject::tr("Partial result (overlapscope-partial)");
        case OpenedKind::Capture: break;
    }
    return QObject::tr("Capture");
}

}  // namespace osc::gui

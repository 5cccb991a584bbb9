// Loads what the window shows off the GUI thread: for a capture, reading,
// building the timeline model and running the analysis; for partial results
// or a saved report (analysis_loader.h), reading and merging them. All on a
// worker thread, with progress reported back and cancellation at any time
// (the window may close mid-load).
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/timeline_model.h"
#include "gui/widgets/analysis_loader.h"

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <memory>

namespace osc::gui {

struct LoadedCapture {
    std::shared_ptr<TimelineModel> model;  // null when the file holds no trace
    std::shared_ptr<const Analysis> analysis;
    QString path;
    OpenedKind kind = OpenedKind::Capture;
    QStringList inputs;    // analysis-only: the captures the results were made from
    int partialFiles = 0;  // partial result files merged
};

// Does the whole load synchronously (used by the worker and by --screenshot):
// what `path` is decides whether there is a timeline (openedKind).
// Throws CaptureError, LoadCancelled or std::exception.
LoadedCapture loadForViewing(const QString& path, const AnalysisSettings& settings, const std::atomic<bool>* cancel,
                             const std::function<void(double, const QString&)>& progress);

class CaptureLoader : public QObject {
    Q_OBJECT
public:
    explicit CaptureLoader(QObject* parent = nullptr);
    ~CaptureLoader() override;

    void start(const QString& path, const AnalysisSettings& settings = {});
    void cancel();  // returns at once; the worker stops at its next check
    bool busy() const { return thread_ != nullptr; }
    void waitForIdle();

signals:
    void progress(double fraction, const QString& stage);
    void loaded(const osc::gui::LoadedCapture& result);
    void failed(const QString& message);

private:
    QThread* thread_ = nullptr;
    std::shared_ptr<std::atomic<bool>> cancel_;
};

}  // namespace osc::gui

Q_DECLARE_METATYPE(osc::gui::LoadedCapture)

// Loads a capture off the GUI thread: reading, building the timeline model and
// running the analysis all happen on a worker thread, with progress reported
// back and cancellation at any time (the window may close mid-load).
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/timeline_model.h"

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <memory>

namespace osc::gui {

struct LoadedCapture {
    std::shared_ptr<TimelineModel> model;
    std::shared_ptr<const Analysis> analysis;
    QString path;
};

// Does the whole load synchronously (used by the worker and by --screenshot).
// Throws CaptureError, LoadCancelled or std::exception.
LoadedCapture loadForViewing(const QString& path, const AnalysisSettings& settings,
                             const std::atomic<bool>* cancel,
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

// The what-if panel: for the loaded capture, predicted step time against DDP
// bucket size (analyzer/whatif), as a small plot. The layout is
// gui/model/whatif_plot.h; this widget computes on demand, on a worker
// thread when it is shown (the replay of a 1,024-rank job's kernels took
// seconds of the window's thread: issue 40), and paints.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/whatif/whatif.h"
#include "gui/model/timeline_model.h"

#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QMainWindow;
class QMenu;

namespace osc::gui {

class WhatIfPanel : public QWidget {
    Q_OBJECT
public:
    explicit WhatIfPanel(QWidget* parent = nullptr);
    ~WhatIfPanel() override;

    // The loaded capture; the prediction runs when the panel is next shown.
    void setData(std::shared_ptr<TimelineModel> model, std::shared_ptr<const Analysis> analysis);
    // Runs the prediction now, on this thread.
    void compute();
    // Starts the prediction on a worker (what showing the panel does); the
    // result replaces "Computing…" when it arrives, unless another capture
    // came meanwhile.
    void computeInBackground();
    bool computing() const { return pending_ > 0; }
    // Waits until a prediction started in the background is shown (tests, --screenshot).
    void waitForResult();
    // For tests and callers that already have a result.
    void setResult(whatif::WhatIfResult result);
    const std::optional<whatif::WhatIfResult>& result() const { return result_; }
    QString message() const { return message_; }
    QSize sizeHint() const override { return {560, 300}; }

    // The bucket sizes the panel predicts, MiB.
    static std::vector<double> bucketSizes();

protected:
    void paintEvent(QPaintEvent*) override;
    void showEvent(QShowEvent*) override;

private:
    std::shared_ptr<TimelineModel> model_;
    std::shared_ptr<const Analysis> analysis_;
    bool stale_ = false;
    uint64_t generation_ = 0;  // of the capture shown: a result for an older one is dropped
    int pending_ = 0;          // background predictions of the current capture not yet shown
    std::vector<QPointer<class QThread>> workers_;
    std::optional<whatif::WhatIfResult> result_;
    QString message_;
};

// The hook for the main window: a hidden "What-if" dock holding the panel and
// a View menu entry that shows it. The window hands each loaded capture to
// the panel (MainWindow::showLoaded).
WhatIfPanel* addWhatIfDock(QMainWindow* window, QMenu* viewMenu);

}  // namespace osc::gui

// The what-if panel: for the loaded capture, predicted step time against DDP
// bucket size (analyzer/whatif), as a small plot. The layout is
// gui/model/whatif_plot.h; this widget computes on demand and paints.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/whatif/whatif.h"
#include "gui/model/timeline_model.h"

#include <QWidget>

#include <memory>
#include <optional>

class QMainWindow;
class QMenu;

namespace osc::gui {

class WhatIfPanel : public QWidget {
    Q_OBJECT
public:
    explicit WhatIfPanel(QWidget* parent = nullptr);

    // The loaded capture; the prediction runs when the panel is next shown.
    void setData(std::shared_ptr<TimelineModel> model, std::shared_ptr<const Analysis> analysis);
    // Runs the prediction now (what showing the panel does).
    void compute();
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
    std::optional<whatif::WhatIfResult> result_;
    QString message_;
};

// The hook for the main window: a hidden "What-if" dock holding the panel and
// a View menu entry that shows it. The window hands each loaded capture to
// the panel (MainWindow::showLoaded).
WhatIfPanel* addWhatIfDock(QMainWindow* window, QMenu* viewMenu);

}  // namespace osc::gui

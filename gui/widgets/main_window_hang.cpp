// MainWindow: a hung job shown as hung (issue 40 item 2). When a capture is
// shown, its warnings go to the banner over the timeline and its hang
// analysis starts on a worker (hang_view.h); when that finds a hang or a
// desync, the banner gives the verdict, the Collective progress panel is
// raised with the same analysis, the lanes show the waits that never
// completed, and the view, unless the user moved it meanwhile, is framed on
// the stuck call.
#include "gui/widgets/main_window.h"

#include "gui/widgets/hang_panel.h"
#include "gui/widgets/hang_view.h"
#include "gui/widgets/timeline_widget.h"

#include <QDockWidget>

#include <algorithm>

namespace osc::gui {

void MainWindow::connectHangBanner() {
    qRegisterMetaType<HangResult>();
    connect(hangBanner_, &HangBanner::analysed, this, &MainWindow::applyHang);
    connect(hangBanner_, &HangBanner::goToStuckCall, this, [this] {
        const auto& focus = hangBanner_->focus();
        if (focus && focus->frame && hasTimeline()) timeline_->setViewRange(*focus->frame);
    });
    connect(hangBanner_, &HangBanner::showProgress, this, [this] { raisePanel("hang"); });
}

void MainWindow::showHang(const LoadedCapture& loaded, bool refresh) {
    QStringList warnings;
    const auto add = [&warnings](const std::string& w) {
        const QString text = QString::fromStdString(w);
        if (!warnings.contains(text)) warnings << text;
    };
    if (loaded.model)
        for (const std::string& w : loaded.model->capture().warnings) add(w);
    if (loaded.analysis)
        for (const std::string& w : loaded.analysis->warnings) add(w);
    timeline_->setHangFocus(nullptr);
    viewAtLoad_ = timeline_->viewRange();
    hangReframes_ = !refresh;
    hangBanner_->setCapture(loaded.model, warnings);
}

void MainWindow::applyHang(const HangResult& result) {
    if (result.model != current_.model) return;
    if (auto* panel = findChild<HangPanel*>()) {
        if (result.progress)
            panel->setProgress(*result.progress);
        else
            panel->setFailure(QString::fromStdString(result.error));
    }
    if (!result.focus || !result.focus->found()) return;
    markHang(*result.model, *result.focus);
    timeline_->setHangFocus(result.focus);
    timeline_->invalidateGeometry();
    timeline_->relayout();
    if (!hangReframes_) return;
    hangReframes_ = false;
    raisePanel("hang");
    // As tall as the panel's grid needs (a few ranks need little), so the lanes keep the room.
    if (auto* dock = findChild<QDockWidget*>("hang"); dock && dock->widget()) {
        const auto* view = dock->findChild<HangProgressView*>();
        const int wanted = (view ? view->sizeHint().height() : 0) + dock->height() - dock->widget()->height() + 8;
        resizeDocks({dock}, {std::clamp(wanted, 120, height() * 2 / 5)}, Qt::Vertical);
    }
    if (result.focus->frame && timeline_->viewRange() == viewAtLoad_) timeline_->setViewRange(*result.focus->frame);
    updateDetails(timeline_->selectedEvent());
}

void MainWindow::waitForHangAnalysis() { hangBanner_->waitForResult(); }

}  // namespace osc::gui

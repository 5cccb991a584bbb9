#include "gui/widgets/main_window.h"

#include "gui/widgets/analysis_only_view.h"
#include "gui/widgets/attach_dialog.h"
#include "gui/widgets/compare_timeline.h"
#include "gui/widgets/dark_theme.h"

#include "analyzer/capture/api_call_names.h"
#include "gui/model/event_details.h"
#include "gui/model/range_metrics.h"
#include "gui/model/saved_layout.h"
#include "gui/model/time_ticks.h"
#include "gui/widgets/hang_panel.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/legend_bar.h"
#include "gui/widgets/main_window_parts.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/overview_strip.h"
#include "gui/widgets/rank_menu.h"
#include "gui/widgets/rank_panel.h"
#include "gui/widgets/selection_panel.h"
#include "gui/widgets/statistics_panel.h"
#include "gui/widgets/timeline_frame.h"
#include "gui/widgets/timeline_widget.h"
#include "gui/widgets/whatif_panel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QToolBar>

namespace osc::gui {

using namespace window_parts;

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("overlapscope"));
    setAcceptDrops(true);
    frame_ = new TimelineFrame(this);
    timeline_ = frame_->timeline();
    analysisOnly_ = new AnalysisOnlyView(this);
    centre_ = new QStackedWidget(this);
    centre_->addWidget(frame_);
    centre_->addWidget(analysisOnly_);
    setCentralWidget(centre_);
    loader_ = new CaptureLoader(this);
    steps_ = new StepTableModel(this);
    collectives_ = new CollectiveTableModel(this);
    buildMenus();
    buildDocks();
    buildFindBar();
    installCopyOnTables();
    connectHangBanner();
    buildSettingsViews();
    // The painted views take the system's dark theme as Qt's widgets do.
    followSystemTheme(this, {timeline_, frame_->overview(), frame_->legend(), heatMap_->view(),
                             compareTimeline_->timeline(), findChild<HangProgressView*>(), findChild<WhatIfPanel*>()});
    enableTimelineActions(false, OpenedKind::Capture);

    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(240);
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    cancelButton_->setObjectName("cancelLoad");
    statusLabel_ =
        new QLabel(tr("Open a capture, partial results or a saved report: File > Open, or drop a file here."), this);
    // A long path or summary is cut at the window's edge rather than widening the window.
    statusLabel_->setMinimumWidth(1);
    statusBar()->addWidget(statusLabel_, 1);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancelButton_);
    progress_->hide();
    cancelButton_->hide();

    connect(cancelButton_, &QPushButton::clicked, this, [this] {
        loader_->cancel();
        loading_ = false;
        progress_->hide();
        cancelButton_->hide();
        statusLabel_->setText(tr("Loading cancelled."));
    });
    connect(loader_, &CaptureLoader::progress, this, [this](double f, const QString& stage) {
        // Progress still queued from a cancelled load must not overwrite "cancelled".
        if (!loading_) return;
        // Stages report their own fractions (reading, then analysing side by
        // side): the bar only moves forward within one load.
        progress_->setValue(std::max(progress_->value(), static_cast<int>(f * 1000)));
        statusLabel_->setText(tr("Loading… %1").arg(stage));
    });
    connect(loader_, &CaptureLoader::loaded, this, [this](const LoadedCapture& loaded) {
        if (loading_) showLoaded(loaded);  // a load finished just as it was cancelled stays unshown
    });
    connect(loader_, &CaptureLoader::failed, this, [this](const QString& msg) {
        if (!loading_) return;
        loading_ = false;
        progress_->hide();
        cancelButton_->hide();
        statusLabel_->setText(msg);
        // Not exec(): a modal loop here would stall the window (and tests).
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open file"), msg, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
    followTimer_ = new QTimer(this);
    connect(followTimer_, &QTimer::timeout, this, [this] {
        if (loader_->busy() || current_.path.isEmpty() || !current_.model) return;
        reloading_ = true;
        loading_ = true;
        progress_->setValue(0);
        loader_->start(current_.path, settings_);
    });
    connect(timeline_, &TimelineWidget::selectionChanged, this, &MainWindow::updateSelectionPanel);
    // The layout is saved as it changes (a killed window keeps it), a moment
    // after the last change so that a burst of them is one write.
    layoutSaveTimer_ = new QTimer(this);
    layoutSaveTimer_->setSingleShot(true);
    layoutSaveTimer_->setInterval(300);
    connect(layoutSaveTimer_, &QTimer::timeout, this, &MainWindow::saveLayout);
    connect(timeline_, &TimelineWidget::layoutChanged, layoutSaveTimer_, qOverload<>(&QTimer::start));

    connect(timeline_, &TimelineWidget::eventSelected, this, &MainWindow::updateDetails);
}

MainWindow::~MainWindow() {
    loader_->cancel();
    compareLoader_->cancel();
    loader_->waitForIdle();
    compareLoader_->waitForIdle();
}

void MainWindow::openCapture(const QString& given) {
    // Absolute, so that Open Recent and follow refreshes work from any directory.
    const QString path = given.isEmpty() ? given : QFileInfo(given).absoluteFilePath();
    reloading_ = false;
    loading_ = true;
    // The file's own analysis settings, saved with its layout (main_window_settings.cpp).
    settings_ = settingsFor(path);
    statusLabel_->setText(tr("Loading %1…").arg(path));
    progress_->setValue(0);
    progress_->show();
    cancelButton_->show();
    loader_->start(path, settings_);
}

AttachDialog* MainWindow::showAttachDialog() {
    if (!attachDialog_) {
        attachDialog_ = new AttachDialog(this);
        connect(attachDialog_, &AttachDialog::followRequested, this, [this](const QString& path) {
            openCapture(path);
            setFollowing(true);
        });
    } else {
        attachDialog_->refresh();
    }
    attachDialog_->show();
    attachDialog_->raise();
    return attachDialog_;
}

void MainWindow::setFollowing(bool on, int intervalMs) {
    following_ = on;
    if (followAction_) followAction_->setChecked(on);
    if (on)
        followTimer_->start(intervalMs);
    else
        followTimer_->stop();
}

void MainWindow::showLoaded(const LoadedCapture& loaded) {
    loading_ = false;
    progress_->hide();
    cancelButton_->hide();
    const bool timeline = loaded.model != nullptr;
    const bool refresh = reloading_ && following_ && current_.model && timeline;
    reloading_ = false;
    const ViewRange before = timeline_->viewRange();
    saveLayout();  // of the capture shown until now
    current_ = loaded;
    SavedLayout layout;
    if (timeline) {
        loaded.model->setHostLanesShown(hostAction_->isChecked());
        layout = restoreLayout();
    }
    timeline_->setModel(loaded.model, loaded.analysis);
    if (timeline) {
        // Per file: one without a saved layout starts ungrouped, not as the last file was.
        timeline_->restoreRankView(layout);
        showRankView(this, timeline_->rankView());
    }
    if (!timeline) analysisOnly_->setLoaded(loaded);
    const bool hadTimeline = centre_->currentWidget() == timelinePage_;
    centre_->setCurrentWidget(timeline ? timelinePage_ : analysisOnly_);
    enableTimelineActions(timeline, loaded.kind);
    // Analysed again with other settings: the view stays where it was.
    const bool keptView = timeline && keepView_.has_value();
    if (keptView) timeline_->setViewRange(*keepView_, false);
    keepView_.reset();
    if (refresh) {
        // Keep the zoom and scroll to the newest activity (auto-scroll).
        const TimeNs len = before.length();
        timeline_->setViewRange({loaded.model->end() - len * 9 / 10, loaded.model->end() + len / 10}, false);
    }
    steps_->setData(loaded.model, loaded.analysis);
    // Pipeline and all-to-all columns only where the capture has them.
    stepView_->setColumnHidden(StepTableModel::Bubble, !steps_->hasPipeline());
    stepView_->setColumnHidden(StepTableModel::AllToAllImbalance, !steps_->hasAllToAll());
    collectives_->setData(loaded.model, loaded.analysis);
    if (auto* whatIf = findChild<WhatIfPanel*>()) whatIf->setData(loaded.model, loaded.analysis);
    if (auto* hangs = findChild<HangPanel*>()) hangs->setData(loaded.model, loaded.analysis != nullptr);
    if (auto* ranks = findChild<RanksPanel*>()) ranks->setData(loaded.model, loaded.analysis);
    statistics_->setCapture(loaded.model, loaded.analysis);
    const QString stepRules =
        tr("Steps are NVTX or profiler ranges named ProfilerStep#N, step N or iteration N (torch.profiler's "
           "schedule writes ProfilerStep#N; with NVTX, push a range per iteration). View > Analysis settings "
           "takes other names, as `overlapscope report --step-pattern` does.");
    showHint(stepStack_,
             steps_->rowCount() > 0 ? QString()
             : timeline
                 ? tr("No steps in this capture. %1 Metrics over the whole capture are in the Selection panel: drag "
                      "across a device.")
                       .arg(stepRules)
                 : tr("No steps in this file: the captures it was made from had none. %1 Each device's totals over its "
                      "whole span are in the device table.")
                       .arg(stepRules));
    const bool anyComm =
        loaded.analysis && std::any_of(loaded.analysis->devices.begin(), loaded.analysis->devices.end(),
                                       [](const DeviceAnalysis& d) { return !d.collectives.empty(); });
    showHint(
        collStack_,
        anyComm
            ? QString()
            : tr("No communication in this %1: no NCCL or RCCL kernels, none of the other libraries recognised by "
                 "name (MSCCL, MSCCL++, DeepEP, NVSHMEM, Transformer Engine userbuffers, PyTorch symmetric memory, "
                 "vLLM custom all-reduce) and no peer-to-peer copies, so there is nothing to overlap. Other kernels "
                 "can be counted as communication in View > Analysis settings (`--comm-kernel REGEX`).")
                  .arg(timeline ? tr("capture") : tr("file")));
    frame_->legend()->setCaptureHas(
        loaded.analysis && !loaded.analysis->p2p.empty(), loaded.analysis && !loaded.analysis->pipeline.empty(),
        timeline ? QString::fromStdString(apiFamiliesOf(loaded.model->capture())) : QStringLiteral("CUDA"));
    heatMap_->view()->setAnalysis(loaded.analysis);
    // Without a timeline the tables are what there is to read: give them
    // room. With one, the panels get what the lanes leave blank.
    if (!timeline && timeline != hadTimeline)
        resizeDocks({stepDock_}, {height() / 2}, Qt::Vertical);
    else if (timeline && !refresh)
        QTimer::singleShot(0, this, &MainWindow::fitBottomDocks);  // once the window has its size
    // Time buckets cut the timeline's coverage; a file without one has its steps.
    if (!timeline) heatMap_->setPerStep(true);
    // Many ranks: the heat map is the way in.
    if (!refresh && loaded.analysis && loaded.analysis->devices.size() >= 16) {
        heatDock_->raise();
        resizeDocks({heatDock_}, {height() * 2 / 5}, Qt::Vertical);
    }
    // Find results belong to the capture they were found in; a follow
    // refresh finds the same text again in the grown capture.
    const QString pattern = findPattern_;
    clearFind();
    if (refresh && !pattern.isEmpty()) {
        findEdit_->setText(pattern);
        find(pattern);
    }
    setWindowTitle(tr("overlapscope · %1").arg(QFileInfo(loaded.path).fileName()));
    refreshComparison();  // A changed: B against the new A (after A's own hints and title)
    showHang(loaded, refresh || keptView);
    showFindings(loaded);
    if (timeline) {
        const Capture& c = loaded.model->capture();
        statusLabel_->setText(tr("%1: %2, %3 kernels")
                                  .arg(loaded.path, c.processes.size() == 1
                                                        ? tr("1 process")
                                                        : tr("%1 processes").arg(count(c.processes.size())))
                                  .arg(count(c.kernelCount())));
    } else {
        size_t collectives = 0;
        for (const DeviceAnalysis& d : loaded.analysis->devices) collectives += d.collectives.size();
        const size_t devices = loaded.analysis->devices.size();
        statusLabel_->setText(tr("%1: %2, %3, %4 step rows, %5 collectives, no timeline")
                                  .arg(loaded.path, openedKindTitle(loaded.kind, loaded.partialFiles),
                                       devices == 1 ? tr("1 device") : tr("%1 devices").arg(devices))
                                  .arg(count(static_cast<size_t>(steps_->rowCount())))
                                  .arg(count(collectives)));
    }
    if (!refresh) rememberRecent(loaded.path);
    updateSelectionPanel();
    updateDetails({});
}

QAction* MainWindow::timelineAction(QAction* action) {
    timelineActions_ << action;
    return action;
}

void MainWindow::enableTimelineActions(bool timeline, OpenedKind kind) {
    for (QAction* a : timelineActions_) a->setEnabled(timeline);
    if (!timeline) {
        findBar_->hide();
        if (following_) setFollowing(false);  // partials and reports are read once, whole
    }
    // Partials are merged again with or without the alignment; a saved report
    // keeps the one it was saved with.
    const bool saved = kind == OpenedKind::SavedReport;
    alignAction_->setEnabled(!saved);
    alignAction_->setToolTip(saved ? tr("A saved report keeps the clock alignment it was made with")
                                   : tr("Shift each process so its collectives end with the lowest rank's (in the "
                                        "median): for captures from several hosts, whose clocks disagree"));
}

void MainWindow::closeEvent(QCloseEvent* e) {
    saveLayout();
    // Closing mid-load is allowed: the reader stops at its next cancel check.
    loader_->cancel();
    compareLoader_->cancel();
    loader_->waitForIdle();
    compareLoader_->waitForIdle();
    e->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) openCapture(urls.front().toLocalFile());
}

QString MainWindow::layoutKey() const {
    if (current_.path.isEmpty() || !current_.model) return {};
    // Slashes would nest QSettings groups; the path is kept whole in a value-safe form.
    return "layouts/" +
           QString::fromUtf8(QFileInfo(current_.path)
                                 .absoluteFilePath()
                                 .toUtf8()
                                 .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

void MainWindow::saveLayout() {
    const QString key = layoutKey();
    if (key.isEmpty()) return;
    QSettings settings;
    SavedLayout layout = layoutOf(*current_.model);
    saveRankView(layout, timeline_->rankView());
    if (layout.empty())
        settings.remove(key);
    else
        settings.setValue(key, QString::fromStdString(layout.toJson()));
}

SavedLayout MainWindow::restoreLayout() {
    const QString key = layoutKey();
    if (key.isEmpty()) return {};
    const QString text = QSettings().value(key).toString();
    if (text.isEmpty()) return {};
    const auto layout = SavedLayout::fromJson(text.toStdString());
    if (!layout) return {};
    applyLayout(*current_.model, *layout);
    return *layout;
}

}  // namespace osc::gui

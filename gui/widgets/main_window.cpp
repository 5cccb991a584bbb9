#include "gui/widgets/main_window.h"

#include "gui/widgets/analysis_only_view.h"
#include "gui/widgets/attach_dialog.h"

#include "gui/model/event_details.h"
#include "gui/model/range_metrics.h"
#include "gui/model/time_ticks.h"
#include "gui/widgets/hang_panel.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/legend_bar.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/overview_strip.h"
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
namespace {

constexpr int kMaxRecent = 10;
constexpr int kStepDockHeight = 170;  // under a timeline

QString dur(TimeNs ns) { return QString::fromStdString(formatDuration(ns, 4)); }

QString count(size_t n) { return QLocale().toString(static_cast<qulonglong>(n)); }

// The models sort themselves off the GUI thread (AsyncSortedTableModel).
QTableView* makeTable(QAbstractItemModel* model, int timeColumn, QWidget* parent) {
    auto* view = new QTableView(parent);
    view->setModel(model);
    view->setSortingEnabled(true);
    view->sortByColumn(timeColumn, Qt::AscendingOrder);  // time order until the user sorts
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    return view;
}

// A table, or in its place a sentence saying why it is empty.
QStackedWidget* withHint(QTableView* table, QWidget* parent) {
    auto* stack = new QStackedWidget(parent);
    stack->addWidget(table);
    auto* hint = new QLabel(parent);
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignCenter);
    hint->setMargin(12);
    hint->setTextInteractionFlags(Qt::TextSelectableByMouse);
    stack->addWidget(hint);
    return stack;
}

void showHint(QStackedWidget* stack, const QString& hint) {
    static_cast<QLabel*>(stack->widget(1))->setText(hint);
    stack->setCurrentIndex(hint.isEmpty() ? 0 : 1);
}

}  // namespace

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
    enableTimelineActions(false, OpenedKind::Capture);

    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(240);
    cancelButton_ = new QPushButton(tr("Cancel"), this);
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
        progress_->setValue(static_cast<int>(f * 1000));
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
        loader_->start(current_.path, settings_);
    });
    connect(timeline_, &TimelineWidget::selectionChanged, this, &MainWindow::updateSelectionPanel);

    connect(timeline_, &TimelineWidget::eventSelected, this, &MainWindow::updateDetails);
}

MainWindow::~MainWindow() {
    loader_->cancel();
    loader_->waitForIdle();
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        // What is in a file decides how it opens (openedKind); the filters only help to find it.
        const QString path = QFileDialog::getOpenFileName(this, tr("Open capture or results"), {},
                                                          tr("Captures and results (*.sqlite *.db *.json *.json.gz);;"
                                                             "Captures (*.sqlite *.db *.json *.json.gz);;"
                                                             "Partial results (*.partial.json);;"
                                                             "Saved reports (*.json);;"
                                                             "All files (*)"));
        if (!path.isEmpty()) openCapture(path);
    });
    file->addAction(tr("Open &directory (multi-rank capture or partial results)…"), this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Open a multi-rank capture or partial results directory"));
        if (!dir.isEmpty()) openCapture(dir);
    });
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    refreshRecentMenu();
    QAction* follow =
        timelineAction(file->addAction(tr("&Follow live capture"), this, [this](bool on) { setFollowing(on); }));
    follow->setCheckable(true);
    follow->setToolTip(tr("Re-read the capture every second while an agent writes it"));
    followAction_ = follow;
    file->addAction(tr("&Attach to live agent…"), this, [this] { showAttachDialog(); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    viewMenu_ = view;
    timelineAction(view->addAction(tr("Fit &all"), QKeySequence(Qt::Key_Home), timeline_, &TimelineWidget::fitAll));
    timelineAction(view->addAction(tr("Fit &selection"), timeline_, &TimelineWidget::fitSelection));
    timelineAction(
        view->addAction(tr("&Back"), QKeySequence(Qt::ALT | Qt::Key_Left), timeline_, &TimelineWidget::goBack));
    timelineAction(view->addAction(tr("Clear selection"), timeline_, &TimelineWidget::clearSelection));
    view->addSeparator();
    alignAction_ = view->addAction(tr("Align clocks on &collectives"), this, [this](bool on) {
        settings_.alignCollectives = on;
        if (!current_.path.isEmpty()) openCapture(current_.path);
    });
    alignAction_->setCheckable(true);
    hostAction_ = timelineAction(view->addAction(tr("CPU &lanes (API calls, operators)"), this, [this](bool on) {
        if (!timeline_->model()) return;
        timeline_->model()->setHostLanesShown(on);
        timeline_->relayout();
    }));
    hostAction_->setCheckable(true);
    hostAction_->setChecked(true);
    QAction* overview = timelineAction(
        view->addAction(tr("&Overview strip"), this, [this](bool on) { frame_->overview()->setVisible(on); }));
    overview->setCheckable(true);
    overview->setChecked(true);
    QAction* legend = timelineAction(
        view->addAction(tr("Colour le&gend"), this, [this](bool on) { frame_->legend()->setVisible(on); }));
    legend->setCheckable(true);
    legend->setChecked(true);
    timelineAction(view->addAction(tr("Show all lanes"), this, [this] {
        if (!timeline_->model()) return;
        timeline_->model()->showAllLanes();
        timeline_->relayout();
    }));
    timelineAction(view->addAction(tr("Collapse all devices"), this, [this] {
        if (auto* m = timeline_->model()) {
            for (size_t g = 0; g < m->groups().size(); ++g) m->setCollapsed(static_cast<int>(g), true);
            timeline_->relayout();
        }
    }));
    timelineAction(view->addAction(tr("Expand all devices"), this, [this] {
        if (auto* m = timeline_->model()) {
            for (size_t g = 0; g < m->groups().size(); ++g) m->setCollapsed(static_cast<int>(g), false);
            timeline_->relayout();
        }
    }));
    addWhatIfDock(this, view);  // issue 19: a dock of its own, shown from this menu
    addHangDock(this, view);    // issue 33: which rank a stuck job waits for
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    timelineAction(edit->addAction(tr("&Find kernels…"), QKeySequence::Find, this, [this] {
        findBar_->show();
        findEdit_->setFocus();
        findEdit_->selectAll();
    }));
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard and mouse"), this, [this] {
        QMessageBox::information(
            this, tr("Keyboard and mouse"),
            tr("Ctrl+wheel: zoom at the cursor · wheel: scroll lanes · Shift+wheel: pan\n"
               "drag: select a range (metrics in the Selection panel) · Shift+drag or middle drag: pan\n"
               "W/S: zoom · A/D: pan · F: fit selection · Home: fit all · Backspace: previous view\n"
               "Esc: clear selection · click: event details · double-click: zoom to event\n"
               "click a device title: collapse it · right-click: hide, move, collapse lanes\n"
               "Ctrl+F: find kernels by name, Enter / Shift+Enter: next / previous hit"));
    });
    help->addAction(tr("&About"), this, [this] {
        QMessageBox::about(this, tr("About overlapscope"),
                           tr("overlapscope: how much GPU communication hides behind computation."));
    });
}

void MainWindow::buildDocks() {
    details_ = new QTableWidget(0, 2, this);
    details_->setHorizontalHeaderLabels({tr("field"), tr("value")});
    details_->horizontalHeader()->setStretchLastSection(true);
    details_->verticalHeader()->hide();
    details_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* detailsDock = new QDockWidget(tr("Details"), this);
    detailsDock->setObjectName("details");
    detailsDock->setWidget(details_);
    addDockWidget(Qt::RightDockWidgetArea, detailsDock);

    selectionPanel_ = new SelectionPanel(this);
    auto* selDock = new QDockWidget(tr("Selection"), this);
    selDock->setObjectName("selection");
    selDock->setWidget(selectionPanel_);
    addDockWidget(Qt::RightDockWidgetArea, selDock);

    auto* stepView = stepView_ = makeTable(steps_, StepTableModel::Start, this);
    auto* stepDock = stepDock_ = new QDockWidget(tr("Steps"), this);
    stepDock->setObjectName("steps");
    stepStack_ = withHint(stepView, this);
    stepDock->setWidget(stepStack_);
    addDockWidget(Qt::BottomDockWidgetArea, stepDock);
    connect(stepView, &QTableView::clicked, this, &MainWindow::jumpToRow);

    auto* collView = makeTable(collectives_, CollectiveTableModel::Start, this);
    auto* collDock = new QDockWidget(tr("Collectives"), this);
    collDock->setObjectName("collectives");
    collStack_ = withHint(collView, this);
    collDock->setWidget(collStack_);
    addDockWidget(Qt::BottomDockWidgetArea, collDock);
    tabifyDockWidget(stepDock, collDock);

    statistics_ = new StatisticsPanel(timeline_, this);
    auto* statsDock = new QDockWidget(tr("Statistics"), this);
    statsDock->setObjectName("statistics");
    statsDock->setWidget(statistics_);
    addDockWidget(Qt::BottomDockWidgetArea, statsDock);
    tabifyDockWidget(collDock, statsDock);

    heatMap_ = new HeatMapPanel(timeline_, this);
    heatDock_ = new QDockWidget(tr("Heat map"), this);
    heatDock_->setObjectName("heatmap");
    heatDock_->setWidget(heatMap_);
    addDockWidget(Qt::BottomDockWidgetArea, heatDock_);
    tabifyDockWidget(statsDock, heatDock_);
    connect(heatMap_->view(), &HeatMapView::cellClicked, this, [this](int group, ViewRange window) {
        if (window.length() <= 0 || !hasTimeline()) return;
        timeline_->setViewRange(window);
        timeline_->revealGroup(group);
    });
    stepDock->raise();
    connect(collView, &QTableView::clicked, this, &MainWindow::jumpToRow);
    resizeDocks({detailsDock}, {380}, Qt::Horizontal);
    resizeDocks({stepDock}, {kStepDockHeight}, Qt::Vertical);
    // View reopens every panel a user may have closed.
    viewMenu_->addSeparator();
    panelsMenu_ = viewMenu_->addMenu(tr("&Panels"));
    for (QDockWidget* dock : {detailsDock, selDock, stepDock, collDock, statsDock, heatDock_})
        panelsMenu_->addAction(dock->toggleViewAction());
}

void MainWindow::buildFindBar() {
    findBar_ = new QToolBar(tr("Find"), this);
    findBar_->setObjectName("find");
    findEdit_ = new QLineEdit(this);
    findEdit_->setPlaceholderText(tr("kernel name contains…"));
    findEdit_->setClearButtonEnabled(true);
    findEdit_->setMaximumWidth(320);
    findLabel_ = new QLabel(this);
    findBar_->addWidget(new QLabel(tr(" Find: "), this));
    findBar_->addWidget(findEdit_);
    findBar_->addAction(tr("◀"), this, [this] { findNext(-1); });
    findBar_->addAction(tr("▶"), this, [this] { findNext(+1); });
    findBar_->addWidget(findLabel_);
    addToolBar(Qt::TopToolBarArea, findBar_);
    findBar_->hide();
    findBar_->toggleViewAction()->setText(tr("Find bar"));
    panelsMenu_->addAction(timelineAction(findBar_->toggleViewAction()));
    connect(findEdit_, &QLineEdit::returnPressed, this, [this] {
        const bool back = QApplication::keyboardModifiers() & Qt::ShiftModifier;
        if (findResult_ && findResult_->count > 0 && !findEdit_->isModified())
            findNext(back ? -1 : +1);
        else
            find(findEdit_->text());
        findEdit_->setModified(false);
    });
}

void MainWindow::openCapture(const QString& given) {
    // Absolute, so that Open Recent and follow refreshes work from any directory.
    const QString path = given.isEmpty() ? given : QFileInfo(given).absoluteFilePath();
    reloading_ = false;
    loading_ = true;
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
    current_ = loaded;
    if (timeline) loaded.model->setHostLanesShown(hostAction_->isChecked());
    timeline_->setModel(loaded.model, loaded.analysis);
    if (!timeline) analysisOnly_->setLoaded(loaded);
    const bool hadTimeline = centre_->currentWidget() == frame_;
    centre_->setCurrentWidget(timeline ? static_cast<QWidget*>(frame_) : analysisOnly_);
    enableTimelineActions(timeline, loaded.kind);
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
    statistics_->setCapture(loaded.model, loaded.analysis);
    const QString stepRules =
        tr("Steps are NVTX or profiler ranges named ProfilerStep#N, step N or iteration N (torch.profiler's "
           "schedule writes ProfilerStep#N; with NVTX, push a range per iteration). `overlapscope report "
           "--step-pattern` takes other names.");
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
            : tr("No communication in this %1: no NCCL kernels (recognised by their ncclKernel / ncclDevKernel "
                 "names) and no peer-to-peer copies, so there is nothing to overlap. Other libraries' kernels can be "
                 "counted as communication with `overlapscope report --comm-kernel REGEX`.")
                  .arg(timeline ? tr("capture") : tr("file")));
    frame_->legend()->setCaptureHas(loaded.analysis && !loaded.analysis->p2p.empty(),
                                    loaded.analysis && !loaded.analysis->pipeline.empty());
    heatMap_->view()->setAnalysis(loaded.analysis);
    // Without a timeline the tables are what there is to read: give them room,
    // and give it back to the timeline when one comes.
    if (timeline != hadTimeline) resizeDocks({stepDock_}, {timeline ? kStepDockHeight : height() / 2}, Qt::Vertical);
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
    if (timeline) {
        const Capture& c = loaded.model->capture();
        statusLabel_->setText(
            tr("%1: %2 processes, %3 kernels").arg(loaded.path).arg(c.processes.size()).arg(count(c.kernelCount())));
        for (const auto& w : c.warnings) statusBar()->showMessage(QString::fromStdString(w), 10000);
    } else {
        size_t collectives = 0;
        for (const DeviceAnalysis& d : loaded.analysis->devices) collectives += d.collectives.size();
        const size_t devices = loaded.analysis->devices.size();
        statusLabel_->setText(tr("%1: %2, %3, %4 step rows, %5 collectives, no timeline")
                                  .arg(loaded.path, openedKindTitle(loaded.kind, loaded.partialFiles),
                                       devices == 1 ? tr("1 device") : tr("%1 devices").arg(devices))
                                  .arg(count(static_cast<size_t>(steps_->rowCount())))
                                  .arg(count(collectives)));
        for (const auto& w : loaded.analysis->warnings) statusBar()->showMessage(QString::fromStdString(w), 10000);
    }
    if (!refresh) rememberRecent(loaded.path);
    updateSelectionPanel();
    updateDetails({});
}

QString MainWindow::selectionSummary() const { return selectionPanel_->text(); }

QString MainWindow::detailsText() const {
    QStringList lines;
    for (int r = 0; r < details_->rowCount(); ++r)
        lines << details_->item(r, 0)->text() + ": " + details_->item(r, 1)->text();
    return lines.join('\n');
}

QString MainWindow::findLabelText() const { return findLabel_->text(); }
QString MainWindow::statusText() const { return statusLabel_->text(); }

QString MainWindow::stepsHint() const {
    return stepStack_->currentIndex() == 1 ? static_cast<QLabel*>(stepStack_->widget(1))->text() : QString();
}

QString MainWindow::collectivesHint() const {
    return collStack_->currentIndex() == 1 ? static_cast<QLabel*>(collStack_->widget(1))->text() : QString();
}

void MainWindow::updateSelectionPanel() {
    if (!hasTimeline() && current_.analysis) {
        selectionPanel_->showMessage(
            tr("No timeline to select a range on: each device's totals over its whole "
               "span are in the device table."));
        return;
    }
    selectionPanel_->showRange(timeline_->model(), timeline_->selection(), timeline_->selectionGroups());
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

void MainWindow::updateDetails(EventRef ref) {
    details_->setRowCount(0);
    TimelineModel* model = timeline_->model();
    if (!model || !ref.valid()) return;
    const DetailList d = eventDetails(*model, ref, current_.analysis.get());
    details_->setRowCount(static_cast<int>(d.size()));
    for (size_t i = 0; i < d.size(); ++i) {
        details_->setItem(static_cast<int>(i), 0, new QTableWidgetItem(QString::fromStdString(d[i].first)));
        auto* v = new QTableWidgetItem(QString::fromStdString(d[i].second));
        v->setToolTip(v->text());
        details_->setItem(static_cast<int>(i), 1, v);
    }
    details_->resizeColumnToContents(0);
}

void MainWindow::jumpToRow(const QModelIndex& index) {
    if (!hasTimeline()) return;  // rows of a file without a trace lead nowhere
    const TimeNs s = index.data(StartRole).toLongLong(), e = index.data(EndRole).toLongLong();
    if (e <= s) return;
    const TimeNs margin = std::max<TimeNs>(1, (e - s) / 10);
    timeline_->setViewRange({s - margin, e + margin});
    const int group = index.data(GroupRole).toInt();
    if (group >= 0) timeline_->setSelection({s, e}, {group});
    // Details follow the row: its kernel, copy or step (none: cleared).
    timeline_->selectEvent(unpackEvent(index.data(EventRole)), false);
}

const FindResult& MainWindow::findResult() const {
    static const FindResult kNone;
    return findResult_ ? *findResult_ : kNone;
}

void MainWindow::clearFind() {
    findResult_.reset();
    findPattern_.clear();
    currentHit_ = -1;
    timeline_->setFindHits(nullptr);
    findLabel_->clear();
}

void MainWindow::waitForPanels() {
    steps_->waitForSort();
    collectives_->waitForSort();
    statistics_->waitForResult();
}

bool MainWindow::raisePanel(const QString& name) {
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        if (dock->objectName() != name) continue;
        dock->show();
        dock->raise();
        if (name == "heatmap" || name == "statistics" || name == "hang")
            resizeDocks({dock}, {height() * 2 / 5}, Qt::Vertical);
        return true;
    }
    return false;
}

void MainWindow::find(const QString& pattern) {
    TimelineModel* model = timeline_->model();
    clearFind();
    if (!model || pattern.isEmpty()) return;
    findPattern_ = pattern;
    auto result = std::make_shared<FindResult>(findKernels(*model, {pattern.toStdString(), std::nullopt}));
    findResult_ = result;
    timeline_->setFindHits(findResult_);
    if (result->count == 0) {
        findLabel_->setText(tr("  no kernel matches"));
        return;
    }
    findLabel_->setText(
        tr("  %1 kernels · total %2 · min %3 · median %4 · max %5")
            .arg(count(result->count))
            .arg(dur(result->total_ns), dur(result->min_ns), dur(result->median_ns), dur(result->max_ns)));
    findNext(+1);
}

void MainWindow::findNext(int direction) {
    if (!findResult_ || findResult_->hits.empty()) return;
    const auto n = static_cast<long>(findResult_->hits.size());
    currentHit_ = currentHit_ < 0 ? (direction > 0 ? 0 : n - 1) : (currentHit_ + direction + n) % n;
    timeline_->selectEvent(findResult_->hits[static_cast<size_t>(currentHit_)].ref(), true);
    statusLabel_->setText(
        tr("hit %1 of %2").arg(count(static_cast<size_t>(currentHit_) + 1), count(findResult_->hits.size())));
}

void MainWindow::rememberRecent(const QString& given) {
    const QString path = QFileInfo(given).absoluteFilePath();
    QSettings settings;
    QStringList recent = settings.value("recentFiles").toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) recent.removeLast();
    settings.setValue("recentFiles", recent);
    refreshRecentMenu();
}

void MainWindow::refreshRecentMenu() {
    recentMenu_->clear();
    const QStringList recent = QSettings().value("recentFiles").toStringList();
    for (const QString& path : recent) {
        recentMenu_->addAction(path, this, [this, path] { openCapture(path); });
    }
    recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* e) {
    // Closing mid-load is allowed: the reader stops at its next cancel check.
    loader_->cancel();
    loader_->waitForIdle();
    e->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) openCapture(urls.front().toLocalFile());
}

}  // namespace osc::gui

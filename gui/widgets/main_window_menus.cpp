// MainWindow: its menus, the find bar and recent files.
#include "gui/widgets/main_window.h"

#include "gui/model/event_details.h"
#include "gui/model/time_ticks.h"
#include "gui/widgets/compare_timeline.h"
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
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QToolBar>

#include <tuple>

namespace osc::gui {

using namespace window_parts;

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
    buildCompareMenu(file);
    refreshRecentMenu();
    QAction* follow =
        timelineAction(file->addAction(tr("&Follow live capture"), this, [this](bool on) { setFollowing(on); }));
    follow->setCheckable(true);
    follow->setToolTip(tr("Re-read the capture every second while an agent writes it"));
    followAction_ = follow;
    file->addAction(tr("&Attach to live agent…"), this, [this] { showAttachDialog(); });
    file->addSeparator();
    buildExportMenu(file);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    viewMenu_ = view;
    timelineAction(view->addAction(tr("Fit &all"), QKeySequence(Qt::Key_Home), timeline_, &TimelineWidget::fitAll));
    // Keys the timeline handles itself: shown in the menu, active only while
    // it has the focus (a letter must still type into the find box).
    const auto timelineKey = [this](QAction* a, QKeySequence key) {
        a->setShortcut(key);
        a->setShortcutContext(Qt::WidgetShortcut);
        timeline_->addAction(a);
        return timelineAction(a);
    };
    timelineKey(view->addAction(tr("Fit &selection"), timeline_, &TimelineWidget::fitSelection),
                QKeySequence(Qt::Key_F));
    timelineAction(view->addAction(tr("Fit s&teps"), timeline_, &TimelineWidget::fitSteps));
    timelineKey(view->addAction(tr("&Previous step"), this, [this] { timeline_->goToStep(-1); }),
                QKeySequence(Qt::Key_BracketLeft));
    timelineKey(view->addAction(tr("&Next step"), this, [this] { timeline_->goToStep(+1); }),
                QKeySequence(Qt::Key_BracketRight));
    timelineAction(
        view->addAction(tr("&Back"), QKeySequence(Qt::ALT | Qt::Key_Left), timeline_, &TimelineWidget::goBack));
    timelineKey(view->addAction(tr("Clear selection"), timeline_, &TimelineWidget::clearSelection),
                QKeySequence(Qt::Key_Escape));
    view->addSeparator();
    alignAction_ = view->addAction(tr("Align clocks on &collectives"), this, [this](bool on) {
        settings_.alignCollectives = on;
        if (!current_.path.isEmpty()) openCapture(current_.path);
        if (comparing()) compareWith(candidate().path);  // both runs analysed alike, or they would not compare
    });
    alignAction_->setCheckable(true);
    hostAction_ = timelineAction(view->addAction(tr("CPU &lanes (API calls, operators)"), this, [this](bool on) {
        if (!timeline_->model()) return;
        timeline_->model()->setHostLanesShown(on);
        timeline_->relayout();
        compareTimeline_->setHostLanesShown(on);
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
    view->addSeparator();
    for (QAction* a : addRankMenu(view, timeline_)) timelineAction(a);  // issue 30 item 3: many ranks
    addRanksDock(this, view, timeline_);
    addWhatIfDock(this, view);                     // issue 19: a dock of its own, shown from this menu
    addHangDock(this, view)->analysedElsewhere();  // issue 33; its analysis runs on the hang banner's worker
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    timelineAction(edit->addAction(tr("&Find…"), QKeySequence::Find, this, [this] {
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
               "W/S: zoom · A/D: pan · F: fit selection · Home: fit all · [ / ]: previous / next step\n"
               "Backspace: previous view · M: marker at the mouse · drag on the ruler: measure across all devices\n"
               "Esc: clear selection · click: event details · double-click: zoom to event\n"
               "click a device title: collapse it · right-click: hide, move, collapse lanes\n"
               "Ctrl+F: find kernels by name, Enter / Shift+Enter: next / previous hit"));
    });
    help->addAction(tr("&About"), this, [this] {
        QMessageBox::about(this, tr("About overlapscope"),
                           tr("overlapscope: how much GPU communication hides behind computation."));
    });
}

void MainWindow::buildFindBar() {
    findBar_ = new QToolBar(tr("Find"), this);
    findBar_->setObjectName("find");
    findEdit_ = new QLineEdit(this);
    findEdit_->setPlaceholderText(tr("name contains… (kernels, NVTX ranges, operators, API calls)"));
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
    // Esc leaves the find bar: its outlines go, the keys go back to the timeline.
    auto* leave = new QAction(findEdit_);
    leave->setShortcut(QKeySequence(Qt::Key_Escape));
    leave->setShortcutContext(Qt::WidgetShortcut);
    findEdit_->addAction(leave);
    connect(leave, &QAction::triggered, this, [this] {
        clearFind();
        findBar_->hide();
        timeline_->setFocus();
    });
    // Closed another way (View > Panels > Find bar): its results go with it.
    connect(findBar_, &QToolBar::visibilityChanged, this, [this](bool visible) {
        if (!visible && findBar_->isHidden()) clearFind();
    });
    connect(findEdit_, &QLineEdit::returnPressed, this, [this] {
        const bool back = QApplication::keyboardModifiers() & Qt::ShiftModifier;
        if (findResult_ && findResult_->count > 0 && !findEdit_->isModified())
            findNext(back ? -1 : +1);
        else
            find(findEdit_->text());
        findEdit_->setModified(false);
    });
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
    // "hit 3 of 2,350" spoke of the results just cleared: the status says what it said before.
    if (!statusBeforeFind_.isEmpty()) statusLabel_->setText(statusBeforeFind_);
    statusBeforeFind_.clear();
}

void MainWindow::find(const QString& pattern) {
    TimelineModel* model = timeline_->model();
    clearFind();
    if (!model || pattern.isEmpty()) return;
    findPattern_ = pattern;
    // Everything with a name: kernels, NVTX ranges, CPU operators, API calls.
    auto result = std::make_shared<FindResult>(findEvents(*model, {pattern.toStdString(), std::nullopt, true}));
    findResult_ = result;
    timeline_->setFindHits(findResult_);
    if (result->count == 0) {
        findLabel_->setText(tr("  nothing matches (kernels, NVTX ranges, operators, API calls)"));
        return;
    }
    QStringList kinds;
    for (const auto& [n, one, many] : {std::tuple{result->kernels, tr("kernel"), tr("kernels")},
                                       {result->ranges, tr("NVTX range"), tr("NVTX ranges")},
                                       {result->operators, tr("operator"), tr("operators")},
                                       {result->calls, tr("API call"), tr("API calls")}})
        if (n) kinds << count(n) + " " + (n == 1 ? one : many);
    findLabel_->setText(
        tr("  %1 · total %2 · min %3 · median %4 · max %5")
            .arg(kinds.join(", "))
            .arg(dur(result->total_ns), dur(result->min_ns), dur(result->median_ns), dur(result->max_ns)));
    findNext(+1);
}

void MainWindow::findNext(int direction) {
    if (!findResult_ || findResult_->hits.empty()) return;
    const auto n = static_cast<long>(findResult_->hits.size());
    currentHit_ = currentHit_ < 0 ? (direction > 0 ? 0 : n - 1) : (currentHit_ + direction + n) % n;
    const EventRef hit = findResult_->hits[static_cast<size_t>(currentHit_)].ref();
    // A hit in a collapsed group, a hidden lane or the CPU lanes turned off: shown.
    timeline_->revealLane(hit.lane);
    hostAction_->setChecked(timeline_->model()->hostLanesShown());
    timeline_->selectEvent(hit, true);
    if (statusBeforeFind_.isEmpty()) statusBeforeFind_ = statusLabel_->text();
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

}  // namespace osc::gui

// MainWindow: its panels (docks) and what they show of the selection and the clicked row.
#include "gui/widgets/main_window.h"

#include "gui/model/event_details.h"
#include "gui/model/event_links.h"
#include "gui/model/hang_focus.h"
#include "gui/model/time_ticks.h"
#include "gui/render/palette.h"
#include "gui/widgets/compare_tables.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/main_window_parts.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/rank_panel.h"
#include "gui/widgets/selection_panel.h"
#include "gui/widgets/statistics_panel.h"
#include "gui/widgets/table_columns.h"
#include "gui/widgets/timeline_frame.h"
#include "gui/widgets/timeline_keys.h"
#include "gui/widgets/timeline_widget.h"
#include "gui/widgets/whatif_panel.h"
#include "gui/widgets/wrapping_delegate.h"

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

namespace osc::gui {

namespace window_parts {

QString dur(TimeNs ns) { return QString::fromStdString(formatDuration(ns, 4)); }

QString count(size_t n) { return QLocale().toString(static_cast<qulonglong>(n)); }

QTableView* makeTable(QAbstractItemModel* model, int timeColumn, QWidget* parent) {
    auto* view = new QTableView(parent);
    view->setModel(model);
    view->setSortingEnabled(true);
    view->sortByColumn(timeColumn, Qt::AscendingOrder);  // time order until the user sorts
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->hide();
    fitColumnsToSample(view);
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    return view;
}

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

int bottomDockHeight(int windowHeight, int current, int blankBelowLanes) {
    const int least = static_cast<int>(windowHeight * kBottomShareMin);
    const int most = static_cast<int>(windowHeight * kBottomShareMax);
    return std::clamp(current + blankBelowLanes, least, std::max(least, most));
}

}  // namespace window_parts

using namespace window_parts;

void MainWindow::buildDocks() {
    details_ = new QTableWidget(0, 2, this);
    details_->setHorizontalHeaderLabels({tr("field"), tr("value")});
    details_->horizontalHeader()->setStretchLastSection(true);
    details_->verticalHeader()->hide();
    details_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Long kernel names wrap onto more lines, whatever the dock's width.
    details_->setWordWrap(true);
    details_->setItemDelegateForColumn(1, new WrappingDelegate(details_));
    connect(details_->horizontalHeader(), &QHeaderView::sectionResized, details_,
            [this] { details_->resizeRowsToContents(); });
    connect(details_, &QTableWidget::cellClicked, this, [this](int row, int column) {
        const QTableWidgetItem* item = details_->item(row, column == 0 ? 1 : column);
        const EventRef target = item ? unpackEvent(item->data(Qt::UserRole)) : EventRef{};
        if (!target.valid() || !hasTimeline()) return;
        timeline_->revealLane(target.lane);
        hostAction_->setChecked(timeline_->model()->hostLanesShown());
        timeline_->selectEvent(target, true);
    });
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
    auto* collDock = collDock_ = new QDockWidget(tr("Collectives"), this);
    collDock->setObjectName("collectives");
    collStack_ = withHint(collView, this);
    collDock->setWidget(collStack_);
    addDockWidget(Qt::BottomDockWidgetArea, collDock);
    tabifyDockWidget(stepDock, collDock);
    buildCompareViews();

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
    // A click on a row leaves the focus in its table: W/A/S/D still move the timeline.
    auto* keys = new TimelineKeyForwarder(timeline_, this);
    for (QAbstractItemView* table : findChildren<QAbstractItemView*>()) keys->watch(table);
    keys->watch(heatMap_->view());
    resizeDocks({detailsDock}, {380}, Qt::Horizontal);
    resizeDocks({stepDock}, {kStepDockHeight}, Qt::Vertical);
    // View reopens every panel a user may have closed.
    viewMenu_->addSeparator();
    panelsMenu_ = viewMenu_->addMenu(tr("&Panels"));
    for (QDockWidget* dock : {detailsDock, selDock, stepDock, collDock, statsDock, heatDock_})
        panelsMenu_->addAction(dock->toggleViewAction());
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

void MainWindow::updateDetails(EventRef ref) {
    details_->setRowCount(0);
    TimelineModel* model = timeline_->model();
    if (!model || !ref.valid()) return;
    DetailList d = eventDetails(*model, ref, current_.analysis.get());
    if (const HangFocus* hang = timeline_->hangFocus()) describeHungKernel(*hang, ref, d);
    details_->setRowCount(static_cast<int>(d.size()));
    for (size_t i = 0; i < d.size(); ++i) {
        details_->setItem(static_cast<int>(i), 0, new QTableWidgetItem(QString::fromStdString(d[i].first)));
        auto* v = new QTableWidgetItem(QString::fromStdString(d[i].second));
        v->setToolTip(v->text());
        details_->setItem(static_cast<int>(i), 1, v);
    }
    // Links to follow the launch both ways; a click selects the linked event.
    for (const EventLink& link : eventLinks(*model, ref)) {
        const int row = details_->rowCount();
        details_->insertRow(row);
        details_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(link.field)));
        auto* v = new QTableWidgetItem(QString::fromStdString(link.text));
        QFont f = v->font();
        f.setUnderline(true);
        v->setFont(f);
        v->setForeground(QColor::fromRgb(0xFF000000u | palette::kSelection));
        v->setToolTip(tr("click: go to %1").arg(v->text()));
        v->setData(Qt::UserRole, packEvent(link.target));
        details_->setItem(row, 1, v);
    }
    details_->resizeColumnToContents(0);
    details_->resizeRowsToContents();
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

void MainWindow::waitForPanels() {
    waitForHangAnalysis();
    steps_->waitForSort();
    collectives_->waitForSort();
    stepCompare_->waitForSort();
    collCompare_->waitForSort();
    if (auto* ranks = findChild<RanksPanel*>()) ranks->model()->waitForSort();
    statistics_->waitForResult();
    if (auto* whatIf = findChild<WhatIfPanel*>()) whatIf->waitForResult();
}

void MainWindow::fitBottomDocks() {
    const int lanes = timeline_->layout().totalHeight() + TimelineWidget::kRulerHeight;
    const int blank = std::max(0, timeline_->height() - lanes);
    const int bottom = bottomDockHeight(height(), stepDock_->height(), blank);
    resizeDocks({stepDock_}, {bottom}, Qt::Vertical);
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

}  // namespace osc::gui

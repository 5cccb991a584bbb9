// The main window's panels as a user drives them (QT_QPA_PLATFORM=offscreen):
// what Details, Selection, Steps, Collectives and Find show after each action,
// against hand-worked captures.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/synth/generic_synth.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/workload_synth.h"
#include "gui/model/column_units.h"
#include "gui/model/event_details.h"
#include "gui/model/step_verdict.h"
#include "gui/model/time_ticks.h"
#include "gui/widgets/legend_bar.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/analysed_capture.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFont>
#include <QHeaderView>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <random>
#include <set>

using namespace osc;
using namespace osc::gui;

namespace {

using guitest::analysed;

// One rank whose only step, a GPU-side ProfilerStep#1 over [0, 10 ms), is
// mostly idle: gemm [0, 1 ms) and [9, 10 ms), AllReduce [1, 1.5 ms), then
// nothing from 1.5 to 9 ms. Busy 2.5 ms, idle 7.5 ms (75 %); compute 2 ms >
// comm 0.5 ms, so the analyzer's flag says "not communication-bound", and
// its largest finding is the 7.5 ms idle gap.
std::shared_ptr<Capture> idleStepCapture() {
    auto c = std::make_shared<Capture>();
    Process p;
    p.host = "node";
    p.pid = 7;
    p.rank = 0;
    Device& d = p.deviceById(0);
    guitest::addKernel(*c, d, 0, 1'000'000, 7, "gemm_kernel");
    guitest::addKernel(*c, d, 1'000'000, 1'500'000, 13, guitest::kAllReduce);
    guitest::addKernel(*c, d, 9'000'000, 10'000'000, 7, "gemm_kernel");
    guitest::addRange(*c, p, 0, 10'000'000, "ProfilerStep#1");
    p.ranges.onGpu.back() = 1;
    c->processes.push_back(std::move(p));
    c->finalize();
    return c;
}

}  // namespace

TEST(StepsPanel, AMostlyIdleStepSaysWhatTheReportSaysAndShowsItsIdleTime) {
    const LoadedCapture l = analysed(idleStepCapture());
    ASSERT_EQ(l.analysis->devices.size(), 1u);
    ASSERT_EQ(l.analysis->devices[0].steps.size(), 1u);
    const StepAnalysis& s = l.analysis->devices[0].steps[0];
    EXPECT_FALSE(s.bottleneck.communicationBound);
    StepTableModel steps;
    QAbstractItemModelTester tester(&steps, QAbstractItemModelTester::FailureReportingMode::Fatal);
    steps.setData(l.model, l.analysis);
    ASSERT_EQ(steps.rowCount(), 1);
    auto cell = [&](int column) { return steps.index(0, column).data().toString().toStdString(); };
    EXPECT_EQ(cell(StepTableModel::Idle), "7.500 ms");
    EXPECT_EQ(cell(StepTableModel::IdleShare), "75.0 %");
    // The report's words: compute 2 ms > comm 0.5 ms, so compute-bound, as
    // `report` prints it; the idle gap is the largest finding, under the
    // report's name, and bold, with the idle share, so the step does not read
    // as busy compute.
    EXPECT_EQ(cell(StepTableModel::Verdict), "compute-bound");
    EXPECT_EQ(cell(StepTableModel::Finding).rfind("idle-gap 7.5 ms", 0), 0u) << cell(StepTableModel::Finding);
    auto bold = [&](int column) { return steps.index(0, column).data(Qt::FontRole).value<QFont>().bold(); };
    EXPECT_TRUE(bold(StepTableModel::IdleShare));
    EXPECT_TRUE(bold(StepTableModel::Finding));
    EXPECT_FALSE(bold(StepTableModel::Verdict));
    // The tooltip carries the analyzer's own sentence.
    EXPECT_TRUE(
        steps.index(0, StepTableModel::Verdict).data(Qt::ToolTipRole).toString().contains("waited for the host"));
    // Without the idle gap the verdict is the same; it follows the flag.
    StepAnalysis busy = s;
    busy.bottleneck.findings.clear();
    EXPECT_EQ(stepVerdict(busy).text, "compute-bound");
    busy.bottleneck.communicationBound = true;
    EXPECT_EQ(stepVerdict(busy).text, "communication-bound");
}

TEST(StepsPanel, EachTimeColumnHasOneUnit) {
    // Issue 30 item 14: "988.622 ms" above "1.002658 s" in one column.
    EXPECT_EQ(formatInUnit(988'622'000, columnUnit(1'002'658'000)), "0.988622 s");
    EXPECT_EQ(formatInUnit(1'002'658'000, columnUnit(1'002'658'000)), "1.002658 s");
    // Durations keep three significant digits of the smallest value.
    EXPECT_EQ(formatInUnit(1'210, columnUnit(40'210'000, 1'210)), "0.00121 ms");
    EXPECT_EQ(formatInUnit(40'210'000, columnUnit(40'210'000, 1'210)), "40.21000 ms");
    EXPECT_EQ(formatInUnit(850, columnUnit(850)), "850 ns");
    // A capture whose steps start on both sides of 1 s: every start in seconds.
    auto c = std::make_shared<Capture>();
    for (int r = 0; r < 2; ++r) {
        Process p;
        p.host = "h";
        p.pid = r;
        p.rank = r;
        Device& d = p.deviceById(0);
        const TimeNs t0 = r == 0 ? 988'622'000 : 1'002'658'000;
        guitest::addKernel(*c, d, t0, t0 + 1'000'000, 7, "gemm_kernel");
        guitest::addKernel(*c, d, t0 + 500'000, t0 + 1'500'000, 13, guitest::kAllReduce);
        guitest::addRange(*c, p, t0, t0 + 2'000'000, "ProfilerStep#1");
        p.ranges.onGpu.assign(p.ranges.size(), 1);
        c->processes.push_back(std::move(p));
    }
    c->finalize();
    const LoadedCapture l = analysed(c);
    StepTableModel steps;
    steps.setData(l.model, l.analysis);
    ASSERT_EQ(steps.rowCount(), 2);
    for (int column : {StepTableModel::Start, StepTableModel::Duration, StepTableModel::Exposed}) {
        std::set<std::string> units;
        for (int row = 0; row < steps.rowCount(); ++row) {
            const std::string text = steps.index(row, column).data().toString().toStdString();
            units.insert(text.substr(text.rfind(' ') + 1));
        }
        EXPECT_EQ(units.size(), 1u) << column;
    }
    EXPECT_TRUE(steps.index(0, StepTableModel::Start).data().toString().endsWith(" s"));
}

TEST(MainWindowPanels, ClickingACollectiveOrStepRowShowsItInDetails) {
    MainWindow win;
    win.resize(1400, 800);
    auto capture = guitest::smallCapture(2, 100);
    for (auto& p : capture->processes) p.ranges.onGpu.assign(p.ranges.size(), 1);  // GPU-side steps
    const LoadedCapture l = analysed(capture);
    win.showLoaded(l);
    CollectiveTableModel* colls = win.collectiveModel();
    colls->waitForSort();
    ASSERT_EQ(colls->rowCount(), 2);  // one AllReduce per rank
    // A kernel was selected before: the row click must replace it.
    win.timeline()->selectEvent(l.model->findKernel(0, 0), false);
    EXPECT_TRUE(win.detailsText().contains("kernel: gemm_kernel")) << win.detailsText().toStdString();
    win.jumpToRow(colls->index(1, CollectiveTableModel::Name));
    const int group = colls->index(1, 0).data(GroupRole).toInt();
    EXPECT_EQ(win.timeline()->selectedEvent(), l.model->findKernel(group, 1));
    EXPECT_TRUE(win.detailsText().contains(QString("kernel: ") + guitest::kAllReduce))
        << win.detailsText().toStdString();
    ASSERT_TRUE(win.timeline()->selection());
    EXPECT_EQ(win.timeline()->selection()->start, 4000 + 100 * group);

    // A step row: Details shows the step with the analyzer's verdict.
    StepTableModel* steps = win.stepModel();
    steps->waitForSort();
    ASSERT_GE(steps->rowCount(), 1);
    win.jumpToRow(steps->index(0, StepTableModel::Step));
    EXPECT_TRUE(win.detailsText().contains("step (GPU window): ProfilerStep#1")) << win.detailsText().toStdString();
    EXPECT_TRUE(win.detailsText().contains("verdict: ")) << win.detailsText().toStdString();
}

QTableView* tableOf(MainWindow& win, QAbstractItemModel* model) {
    for (QTableView* v : win.findChildren<QTableView*>())
        if (v->model() == model) return v;
    return nullptr;
}

TEST(MainWindowPanels, AfterARowClickWasdStillMoveTheTimelineAndDetailsStay) {
    // Issue 30 item 9: a real click on a Steps or Collectives row, then the
    // keys a timeline user presses next.
    MainWindow win;
    win.resize(1400, 800);
    win.show();
    QApplication::setActiveWindow(&win);
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&win));
    auto capture = guitest::smallCapture(2, 100);
    for (auto& p : capture->processes) p.ranges.onGpu.assign(p.ranges.size(), 1);
    win.showLoaded(analysed(capture));
    for (QAbstractItemModel* model :
         {static_cast<QAbstractItemModel*>(win.collectiveModel()), static_cast<QAbstractItemModel*>(win.stepModel())}) {
        win.waitForPanels();
        QTableView* table = tableOf(win, model);
        ASSERT_NE(table, nullptr);
        win.raisePanel(model == win.stepModel() ? "steps" : "collectives");
        QApplication::processEvents();
        const QRect cell = table->visualRect(model->index(0, 1));
        ASSERT_TRUE(cell.isValid());
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QApplication::processEvents();
        const QString details = win.detailsText();
        EXPECT_FALSE(details.isEmpty()) << "the click shows its row in Details";
        const ViewRange before = win.timeline()->viewRange();
        QWidget* focus = QApplication::focusWidget();
        ASSERT_NE(focus, nullptr);
        QTest::keyClick(focus, Qt::Key_W);
        EXPECT_LT(win.timeline()->viewRange().length(), before.length()) << "W zooms in";
        const ViewRange zoomed = win.timeline()->viewRange();
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_D);
        EXPECT_GT(win.timeline()->viewRange().start, zoomed.start) << "D pans later";
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_A);
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_S);
        EXPECT_EQ(win.detailsText(), details) << "keys move the view, not the selection";
        // The table keeps the keys a table needs: Down moves to the next row.
        if (model->rowCount() > 1) {
            QTest::keyClick(table, Qt::Key_Down);
            EXPECT_EQ(table->currentIndex().row(), 1);
        }
    }
}

TEST(MainWindowPanels, DetailsWrapsALongKernelNameInsteadOfCuttingIt) {
    // Issue 30 item 15: "ncclDevKernel_AllGather_RING_LL(ncc…".
    auto c = std::make_shared<Capture>();
    Process p;
    p.host = "h";
    p.pid = 1;
    p.rank = 0;
    Device& d = p.deviceById(0);
    const std::string name =
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
        "BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>>(at::"
        "TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::"
        "MulFunctor<float>> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast)";
    guitest::addKernel(*c, d, 0, 1000, 7, name);
    c->processes.push_back(std::move(p));
    c->finalize();
    MainWindow win;
    win.resize(1400, 800);
    win.show();
    const LoadedCapture l = analysed(c);
    win.showLoaded(l);
    win.timeline()->selectEvent(l.model->findKernel(0, 0), false);
    QApplication::processEvents();
    QTableWidget* details = nullptr;
    for (QTableWidget* t : win.findChildren<QTableWidget*>())
        if (t->columnCount() == 2 && t->horizontalHeaderItem(0) && t->horizontalHeaderItem(0)->text() == "field")
            details = t;
    ASSERT_NE(details, nullptr);
    int row = -1;
    for (int r = 0; r < details->rowCount(); ++r)
        if (details->item(r, 0)->text() == "kernel") row = r;
    ASSERT_GE(row, 0);
    EXPECT_EQ(details->item(row, 1)->text().toStdString(), name);
    const int width = details->columnWidth(1);
    const int lines = details->fontMetrics().horizontalAdvance(QString::fromStdString(name)) / std::max(1, width) + 1;
    ASSERT_GE(lines, 2) << "the name is wider than the column";
    EXPECT_GE(details->rowHeight(row), lines * details->fontMetrics().lineSpacing()) << "every line of it shows";
}

TEST(MainWindowPanels, EscLeavesTheFindBarAndMenusShowTheTimelineKeys) {
    // Issue 30 item 15: Esc in the find bar did nothing; View > Fit
    // selection showed no shortcut.
    MainWindow win;
    win.resize(1400, 800);
    win.show();
    QApplication::setActiveWindow(&win);
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&win));
    win.showLoaded(analysed(guitest::smallCapture(2, 100)));
    QAction* findAction = nullptr;
    QAction* fit = nullptr;
    for (QAction* a : win.findChildren<QAction*>()) {
        if (a->text() == "&Find kernels…" || a->text().startsWith("&Find")) findAction = a;
        if (a->text() == "Fit &selection") fit = a;
    }
    ASSERT_NE(findAction, nullptr);
    ASSERT_NE(fit, nullptr);
    EXPECT_EQ(fit->shortcut().toString(), "F");
    findAction->trigger();
    QApplication::processEvents();
    auto* edit = qobject_cast<QLineEdit*>(QApplication::focusWidget());
    ASSERT_NE(edit, nullptr);
    QTest::keyClicks(edit, "gemm");
    QTest::keyClick(edit, Qt::Key_Return);
    EXPECT_GT(win.findResult().count, 0u);
    QTest::keyClick(edit, Qt::Key_Escape);
    QApplication::processEvents();
    EXPECT_EQ(win.findResult().count, 0u) << "Esc clears the hits";
    EXPECT_FALSE(edit->isVisible()) << "and closes the bar";
    EXPECT_EQ(QApplication::focusWidget(), win.timeline()) << "the keys go back to the timeline";
    // F there fits the selection, as the menu says.
    win.timeline()->setSelection({4000, 5000}, {0});
    QTest::keyClick(win.timeline(), Qt::Key_F);
    EXPECT_EQ(win.timeline()->viewRange(), (ViewRange{4000, 5000}));
}

TEST(MainWindowPanels, SelectionOverSeveralDevicesShowsEachAndALabelledSum) {
    MainWindow win;
    win.resize(1400, 800);
    win.showLoaded(analysed(guitest::smallCapture(2, 1000)));
    // [3000, 8000) on rank 0: overlap 2000, exposed 1000; on rank 1 (shifted
    // by 1000): C = [2000,6000) ∪ [7000,9000), M = [5000,8000) -> within the
    // window overlap [5000,6000) ∪ [7000,8000) = 2000, exposed [6000,7000) = 1000.
    win.timeline()->setSelection({3000, 8000}, {0, 1});
    const QString text = win.selectionSummary();
    EXPECT_TRUE(text.contains("on 2 device(s)")) << text.toStdString();
    EXPECT_TRUE(text.contains("sum of 2 devices\trank 0 · GPU 0\trank 1 · GPU 0")) << text.toStdString();
    EXPECT_TRUE(text.contains("overlap (hidden)\t4 µs\t2 µs\t2 µs")) << text.toStdString();
    EXPECT_TRUE(text.contains("exposed comm\t2 µs\t1 µs\t1 µs")) << text.toStdString();
    // One device: no sum column.
    win.timeline()->setSelection({3000, 8000}, {1});
    EXPECT_FALSE(win.selectionSummary().contains("sum of")) << win.selectionSummary().toStdString();
}

TEST(MainWindowPanels, TheSumOfManyDevicesIsInViewNotBehindAScrollbar) {
    // Issue 30 item 10: at 1920x1080 the dock showed about two device
    // columns; the sum came last, behind the horizontal scrollbar.
    MainWindow win;
    win.resize(1920, 1080);
    win.show();
    win.showLoaded(analysed(guitest::smallCapture(16, 100)));
    std::vector<int> all;
    for (size_t g = 0; g < win.timeline()->model()->groups().size(); ++g) all.push_back(static_cast<int>(g));
    win.timeline()->setSelection({3000, 8000}, all);
    QApplication::processEvents();
    QTableView* table = nullptr;
    for (QTableView* t : win.findChildren<QTableView*>())
        if (t->model() && t->model()->columnCount() == 17) table = t;
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->model()->headerData(0, Qt::Horizontal).toString(), "sum of 16 devices");
    const QRect sum = table->visualRect(table->model()->index(0, 0));
    EXPECT_TRUE(table->viewport()->rect().contains(sum)) << "the sum column is on screen";
    EXPECT_EQ(table->horizontalScrollBar()->value(), 0);
}

TEST(MainWindowPanels, BottomPanelsTakeTheRoomTheLanesLeaveBlank) {
    // Issue 30 item 12: at 1920x1080 the Steps table showed 4-5 rows while
    // the timeline had blank space under its lanes; the Statistics scope box
    // read "whole ca".
    MainWindow win;
    win.resize(1920, 1080);
    win.show();
    // Statistics seen once before a capture is open: its scope box was sized empty.
    win.raisePanel("statistics");
    QApplication::processEvents();
    win.raisePanel("steps");
    auto capture = guitest::smallCapture(2, 100);
    for (auto& p : capture->processes) p.ranges.onGpu.assign(p.ranges.size(), 1);  // steps to list
    win.showLoaded(analysed(capture));
    QTest::qWait(50);  // the panels are sized once the window is laid out
    QTableView* steps = tableOf(win, win.stepModel());
    ASSERT_NE(steps, nullptr);
    ASSERT_TRUE(steps->isVisible());
    const int rows = steps->viewport()->height() / steps->verticalHeader()->defaultSectionSize();
    EXPECT_GE(rows, 12) << "a dozen rows at least";
    const int lanes = win.timeline()->layout().totalHeight() + TimelineWidget::kRulerHeight;
    const int blank = win.timeline()->height() - lanes;
    // No blank strip, unless the panels already have their most.
    auto* stepDock = win.findChild<QDockWidget*>("steps");
    EXPECT_TRUE(blank <= 8 || stepDock->height() >= 1080 * 0.5) << blank << " px blank, dock " << stepDock->height();
    win.raisePanel("statistics");
    QApplication::processEvents();
    for (QComboBox* box : win.findChildren<QComboBox*>()) {
        if (!box->isVisible()) continue;
        EXPECT_GE(box->width(), box->fontMetrics().horizontalAdvance(box->currentText()) + 16)
            << box->currentText().toStdString();
    }
}

TEST(MainWindowPanels, FindHasNoCapAndIsClearedByAnotherCapture) {
    // 400,000 kernels on 2 streams, about a third NCCL: count the expected
    // hits by brute force over the names.
    osc::synth::GenericSpec spec;
    spec.kernels = 400'000;
    spec.streams = 2;
    auto capture = std::make_shared<Capture>(osc::synth::synthesizeGeneric(spec));
    size_t expected = 0;
    for (const auto& d : capture->processes[0].devices)
        for (size_t k = 0; k < d.kernels.size(); ++k)
            expected += std::string(capture->strings.at(d.kernels.name[k])).find("nccl") != std::string::npos;
    ASSERT_GT(expected, 100'000u);  // more than the old cap
    MainWindow win;
    win.resize(1400, 800);
    win.showLoaded(analysed(capture));
    win.find("NCCL");
    EXPECT_EQ(win.findResult().count, expected);
    EXPECT_EQ(win.findResult().hits.size(), expected);  // every hit, not the first 100,000
    EXPECT_TRUE(win.statusText().startsWith("hit 1 of ")) << win.statusText().toStdString();
    EXPECT_TRUE(win.statusText().endsWith(QLocale().toString(static_cast<qulonglong>(expected))));
    win.findNext(-1);  // wraps to the last hit, at the end of the capture
    const EventRef last = win.timeline()->selectedEvent();
    const TimelineModel& m = *win.timeline()->model();
    EXPECT_EQ(m.lane(last.lane).rows[0].start[last.index],
              m.lane(win.findResult().hits.back().lane).rows[0].start[win.findResult().hits.back().index]);

    // Another capture: nothing of the old search survives.
    win.showLoaded(analysed(guitest::smallCapture()));
    EXPECT_EQ(win.findResult().count, 0u);
    EXPECT_EQ(win.timeline()->findHits(), nullptr);
    EXPECT_TRUE(win.findLabelText().isEmpty()) << win.findLabelText().toStdString();
}

TEST(MainWindowPanels, SortingACollectivesTableHappensOffTheGuiThread) {
    // 200,000 collectives whose exposed time is a shuffled 0..N-1 us, and
    // whose start is 10x that, so the view order can be read back exactly.
    auto a = std::make_shared<Analysis>();
    DeviceAnalysis d;
    d.rank = 0;
    const int n = 200'000;
    std::vector<int> perm(n);
    for (int i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
    std::shuffle(perm.begin(), perm.end(), std::mt19937(5));
    for (int i = 0; i < n; ++i) {
        CollectiveInstance c;
        c.collective = "AllReduce";
        c.exposed_ns = perm[static_cast<size_t>(i)] * 1000LL;
        c.start_ns = c.exposed_ns * 10;
        c.end_ns = c.start_ns + 1;
        d.collectives.push_back(c);
    }
    a->devices.push_back(d);
    CollectiveTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setData(nullptr, a);
    QSignalSpy done(&model, &CollectiveTableModel::sortFinished);
    const QPersistentModelIndex first = model.index(0, 0);  // the row exposed perm[0] us
    model.sort(CollectiveTableModel::Exposed, Qt::DescendingOrder);
    // sort() returned before the order changed: the work runs on a worker and
    // lands through the event loop, so painting is never blocked by it.
    EXPECT_TRUE(model.sorting());
    EXPECT_EQ(model.index(0, 0).data(StartRole).toLongLong(), perm[0] * 10'000LL);
    ASSERT_TRUE(done.wait(20000));
    EXPECT_FALSE(model.sorting());
    for (int row = 0; row < n; ++row)
        ASSERT_EQ(model.index(row, 0).data(StartRole).toLongLong(), (n - 1 - row) * 10'000LL) << row;
    // The persistent index (a view's current row) followed its row.
    EXPECT_EQ(first.row(), n - 1 - perm[0]);
    // A reset while a sort runs drops the stale order and sorts the new rows.
    model.sort(CollectiveTableModel::Start, Qt::AscendingOrder);
    model.setData(nullptr, a);
    model.waitForSort();
    EXPECT_EQ(model.index(0, 0).data(StartRole).toLongLong(), 0);
}

// docs/design.md 4d in the GUI. Four synthetic data-parallel ranks that
// arrive together: every AllReduce moves 32 MiB in 20 us + 32 MiB / 25 GB/s
// = 1,362,177 ns, so its algorithm bandwidth is 33,554,432 / 1,362,177 =
// 24.63 GB/s, its bus bandwidth 2·3/4 of that = 36.95 GB/s, and on the
// synthetic H100 SXM (NVLink 4, 450 GB/s) 8.2 % of the link's peak.
TEST(CollectivesPanel, BusBandwidthInTheTableAndInDetails) {
    osc::synth::WorkloadSpec spec;
    spec.ranks = 4;
    spec.steps = 1;
    const LoadedCapture l = analysed(std::make_shared<Capture>(osc::synth::synthesizeWorkload(spec)));
    const DeviceAnalysis& d = l.analysis->devices[0];
    ASSERT_FALSE(d.collectives.empty());
    const CollectiveInstance& op = d.collectives[0];
    ASSERT_TRUE(op.algbw_gbps);
    EXPECT_NEAR(*op.algbw_gbps, 33'554'432.0 / 1'362'177.0, 1e-9);

    CollectiveTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setData(l.model, l.analysis);
    model.waitForSort();
    ASSERT_EQ(model.rowCount(), 4 * 3);  // three 32 MiB buckets per rank
    EXPECT_EQ(model.headerData(CollectiveTableModel::BusBandwidth, Qt::Horizontal, Qt::DisplayRole).toString(),
              "bus bandwidth");
    EXPECT_EQ(model.headerData(CollectiveTableModel::OfPeak, Qt::Horizontal, Qt::DisplayRole).toString(), "% of peak");
    for (int row = 0; row < model.rowCount(); ++row) {
        EXPECT_EQ(model.index(row, CollectiveTableModel::BusBandwidth).data().toString(), "36.9 GB/s") << row;
        EXPECT_EQ(model.index(row, CollectiveTableModel::OfPeak).data().toString(), "8 %") << row;
    }
    const QString tip = model.index(0, CollectiveTableModel::OfPeak).data(Qt::ToolTipRole).toString();
    EXPECT_TRUE(tip.contains("algorithm bandwidth 24.6 GB/s over the transfer after the last rank arrived"))
        << tip.toStdString();
    EXPECT_TRUE(tip.contains("link NVLink 4 (H100 SXM), peak 450 GB/s")) << tip.toStdString();

    auto valueOf = [](const DetailList& details, const std::string& k) {
        for (const auto& [key, v] : details)
            if (key == k) return v;
        return std::string("<missing>");
    };
    const EventRef kernel = l.model->findKernel(l.model->groupOf(d), static_cast<uint32_t>(op.kernelIndex));
    const DetailList details = eventDetails(*l.model, kernel, l.analysis.get());
    EXPECT_EQ(valueOf(details, "algorithm bandwidth"), "24.6 GB/s over the transfer after the last rank arrived");
    EXPECT_EQ(valueOf(details, "bus bandwidth"), "36.9 GB/s (8% of NVLink 4 (H100 SXM), 450 GB/s)");
    // Without the analysis Details has no bus bandwidth.
    EXPECT_EQ(valueOf(eventDetails(*l.model, kernel), "bus bandwidth"), "<missing>");
}

TEST(MainWindowPanels, OpenRecentKeepsAbsolutePaths) {
    QTemporaryDir dir;
    osc::synth::GenericSpec spec;
    spec.kernels = 100;
    spec.streams = 2;
    osc::synth::writeGeneric(spec, dir.filePath("a.sqlite").toStdString(), false);
    const QString before = QDir::currentPath();
    ASSERT_TRUE(QDir::setCurrent(dir.path()));
    {
        MainWindow win;
        QSignalSpy loaded(win.loader(), &CaptureLoader::loaded);
        win.openCapture("a.sqlite");  // relative to the current directory
        ASSERT_TRUE(loaded.wait(20000));
    }
    QDir::setCurrent(before);
    const QStringList recent = QSettings().value("recentFiles").toStringList();
    ASSERT_FALSE(recent.isEmpty());
    EXPECT_EQ(recent.front(), QFileInfo(dir.filePath("a.sqlite")).absoluteFilePath());
    EXPECT_TRUE(QFileInfo(recent.front()).isAbsolute());
}

TEST(MainWindowPanels, CancellingALoadSaysCancelled) {
    QTemporaryDir dir;
    osc::synth::GenericSpec spec;
    spec.kernels = 200'000;
    spec.streams = 4;
    const QString path = dir.filePath("big.sqlite");
    osc::synth::writeGeneric(spec, path.toStdString(), false);
    MainWindow win;
    QSignalSpy progress(win.loader(), &CaptureLoader::progress);
    win.openCapture(path);
    progress.wait(10000);  // the worker is reading
    auto* cancel = win.findChild<QPushButton*>("cancelLoad");
    ASSERT_NE(cancel, nullptr);
    cancel->click();
    win.loader()->waitForIdle();
    QTest::qWait(50);  // progress still queued from the worker is delivered now
    QCoreApplication::processEvents();
    EXPECT_EQ(win.statusText(), "Loading cancelled.");
    EXPECT_EQ(win.timeline()->model(), nullptr);
}

TEST(MainWindowPanels, TheViewMenuReopensEveryPanel) {
    MainWindow win;
    win.show();
    const auto docks = win.findChildren<QDockWidget*>();
    ASSERT_GE(docks.size(), 6);  // details, selection, steps, collectives, statistics, heat map
    // Every action of the View menu and its submenus (Panels, and any a panel adds itself).
    QMenu* view = nullptr;
    for (QAction* a : win.menuBar()->actions())
        if (a->text() == "&View") view = a->menu();
    ASSERT_NE(view, nullptr);
    std::vector<QAction*> actions;
    std::vector<QMenu*> menus{view};
    while (!menus.empty()) {
        QMenu* m = menus.back();
        menus.pop_back();
        for (QAction* a : m->actions()) {
            actions.push_back(a);
            if (a->menu()) menus.push_back(a->menu());
        }
    }
    for (QDockWidget* dock : docks) {
        dock->close();
        EXPECT_FALSE(dock->isVisible());
        const auto it = std::find(actions.begin(), actions.end(), dock->toggleViewAction());
        ASSERT_NE(it, actions.end()) << dock->windowTitle().toStdString() << " cannot be reopened from View";
        (*it)->trigger();
        EXPECT_TRUE(dock->isVisible()) << dock->windowTitle().toStdString();
    }
}

// The legend names only colours the capture can show: a data-parallel job
// has no send arrows and no pipeline bubbles; an all-to-all built from sends
// and receives has arrows but no pipeline; a pipeline has both. The same
// window, reused, follows each capture it shows.
TEST(MainWindowPanels, LegendNamesSendArrowsAndBubblesOnlyWhereTheCaptureHasThem) {
    MainWindow win;
    const LegendBar* legend = win.findChild<LegendBar*>();
    ASSERT_NE(legend, nullptr);
    const auto has = [&](const char* text) {
        return std::any_of(legend->entries().begin(), legend->entries().end(),
                           [&](const LegendBar::Entry& e) { return e.text.startsWith(text); });
    };
    struct Case {
        const char* what;
        std::shared_ptr<Capture> capture;
        bool arrows, bubbles;
    };
    const std::vector<Case> cases = {
        {"pipeline", std::make_shared<Capture>(synth::synthesizePipeline(synth::PipelineSpec{})), true, true},
        {"two-rank all-reduce", guitest::smallCapture(2, 1000), false, false},
        {"all-to-all", std::make_shared<Capture>(synth::synthesizeAllToAll(synth::AllToAllSpec{})), true, false},
    };
    for (const Case& c : cases) {
        win.showLoaded(analysed(c.capture));
        EXPECT_TRUE(has("compute")) << c.what;
        EXPECT_TRUE(has("comm exposed")) << c.what;
        EXPECT_EQ(has("send → receive"), c.arrows) << c.what;
        EXPECT_EQ(has("pipeline bubble"), c.bubbles) << c.what;
    }
}

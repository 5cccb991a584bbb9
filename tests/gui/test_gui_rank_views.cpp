// Many ranks in the window (issue 30 item 3): the View menu's grouping and
// one row per rank acting on the timeline, a click on a host's header, Find,
// Details links and the heat map unfolding a folded header, the rank view
// saved per file, and the Collectives across ranks panel framing a
// collective on every rank. Issue 40: the heat map's lateness, a click on a
// rank's thin row, the Selection panel over every rank, and the
// communicators of the real 2x2 mesh trace.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/synth/workload_synth.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/rank_menu.h"
#include "gui/widgets/rank_panel.h"
#include "gui/widgets/selection_panel.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/analysed_capture.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QTableView>
#include <QTableWidget>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace osc;
using namespace osc::gui;

namespace {

constexpr int kRanks = 16, kPerHost = 4, kLate = 5;

// 16 ranks on 4 hosts; rank 5 starts every step 2 ms late.
LoadedCapture lateRankJob() {
    synth::WorkloadSpec spec;
    spec.ranks = kRanks;
    spec.ranksPerHost = kPerHost;
    spec.steps = 2;
    spec.layers = 4;
    spec.arrivalSkewNs.assign(kRanks, 0);
    spec.arrivalSkewNs[kLate] = 2'000'000;
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(spec));
    return guitest::analysed(capture);
}

TEST(RankViews, SynthSpreadsRanksOverHosts) {
    const LoadedCapture l = lateRankJob();
    const Capture& c = l.model->capture();
    ASSERT_EQ(c.processes.size(), static_cast<size_t>(kRanks));
    for (const Process& p : c.processes) {
        EXPECT_EQ(p.host, "synth-host-" + std::to_string(p.rank / kPerHost));
        EXPECT_EQ(p.localRank, p.rank % kPerHost);
    }
}

TEST(RankViews, MenuGroupsByHostAndHeadersFold) {
    MainWindow win;
    win.resize(1920, 1080);
    win.show();
    win.showLoaded(lateRankJob());
    QApplication::processEvents();
    TimelineWidget* t = win.timeline();
    EXPECT_TRUE(t->layout().sections().empty());
    ASSERT_TRUE(applyRankView(&win, "host", false));
    ASSERT_EQ(t->layout().sections().size(), static_cast<size_t>(kRanks / kPerHost));
    EXPECT_EQ(t->layout().groups().size(), static_cast<size_t>(kRanks));
    // A click on the second host's header folds its four ranks away.
    t->setScrollY(0);
    QTest::mouseClick(t, Qt::LeftButton, {},
                      QPoint(60, TimelineWidget::kRulerHeight + t->layout().sections()[1].y + 4));
    EXPECT_TRUE(t->layout().rankSections()[1].collapsed);
    std::set<int> shown;
    for (const GroupSlot& g : t->layout().groups()) shown.insert(t->model()->processOf(g.group).rank);
    EXPECT_EQ(shown.size(), static_cast<size_t>(kRanks - kPerHost));
    for (int r = kPerHost; r < 2 * kPerHost; ++r) EXPECT_FALSE(shown.count(r)) << "rank " << r;
    EXPECT_FALSE(applyRankView(&win, "rack", false));
}

// The host header a group is under, folded with a click on it as a user
// does; its index into the layout's sections.
int foldHostOf(TimelineWidget* t, int group) {
    const auto& sections = t->layout().rankSections();
    for (size_t i = 0; i < sections.size(); ++i) {
        if (std::find(sections[i].groups.begin(), sections[i].groups.end(), group) == sections[i].groups.end())
            continue;
        const int y = t->layout().sections()[i].y;
        t->setScrollY(y);
        QTest::mouseClick(t, Qt::LeftButton, {}, QPoint(60, TimelineWidget::kRulerHeight + y - t->scrollY() + 4));
        return static_cast<int>(i);
    }
    return -1;
}

bool shown(const TimelineWidget* t, int lane) { return t->layout().slotOf(lane) != nullptr; }

TEST(RankViews, FindAndDetailsLinksUnfoldTheHostHeader) {
    MainWindow win;
    win.resize(1920, 1080);
    win.show();
    win.showLoaded(lateRankJob());
    QApplication::processEvents();
    TimelineWidget* t = win.timeline();
    ASSERT_TRUE(applyRankView(&win, "host", false));

    // Find: the first hit's host folded, then found again.
    win.find("ncclDevKernel");
    ASSERT_GT(win.findResult().hits.size(), 0u);
    const EventRef hit = win.findResult().hits.front().ref();
    const int hitGroup = t->model()->lane(hit.lane).group;
    const int host = foldHostOf(t, hitGroup);
    ASSERT_GE(host, 0);
    ASSERT_TRUE(t->layout().rankSections()[static_cast<size_t>(host)].collapsed);
    ASSERT_FALSE(shown(t, hit.lane));
    win.find("ncclDevKernel");
    EXPECT_EQ(t->selectedEvent(), hit);
    EXPECT_FALSE(t->layout().rankSections()[static_cast<size_t>(host)].collapsed);
    EXPECT_TRUE(shown(t, hit.lane));

    // Details: a kernel of the late rank selected, its host folded, then its
    // launching call followed from Details.
    int late = -1;
    for (size_t g = 0; g < t->model()->groups().size(); ++g)
        if (t->model()->processOf(static_cast<int>(g)).rank == kLate) late = static_cast<int>(g);
    ASSERT_GE(late, 0);
    t->selectEvent(t->model()->findKernel(late, 0), true);
    const int lateHost = foldHostOf(t, late);
    ASSERT_EQ(lateHost, kLate / kPerHost);
    ASSERT_TRUE(t->layout().rankSections()[static_cast<size_t>(lateHost)].collapsed);
    auto* details = win.findChild<QDockWidget*>("details")->findChild<QTableWidget*>();
    ASSERT_TRUE(details);
    int linkRow = -1;
    EventRef target;
    for (int r = 0; r < details->rowCount() && linkRow < 0; ++r)
        if (const QTableWidgetItem* item = details->item(r, 1); item && item->data(Qt::UserRole).isValid()) {
            linkRow = r;
            target = unpackEvent(item->data(Qt::UserRole));
        }
    ASSERT_GE(linkRow, 0) << win.detailsText().toStdString();
    ASSERT_TRUE(target.valid());
    EXPECT_EQ(t->model()->processOf(t->model()->lane(target.lane).group).rank, kLate);
    ASSERT_FALSE(shown(t, target.lane));
    emit details->cellClicked(linkRow, 1);  // as a click on the link does
    EXPECT_EQ(t->selectedEvent(), target);
    EXPECT_FALSE(t->layout().rankSections()[static_cast<size_t>(lateHost)].collapsed);
    EXPECT_TRUE(shown(t, target.lane));

    // The heat map: a click on the late rank's cell brings its host back.
    ASSERT_EQ(foldHostOf(t, late), lateHost);
    ASSERT_TRUE(t->layout().rankSections()[static_cast<size_t>(lateHost)].collapsed);
    emit win.heatMap()->view()->cellClicked(late, {t->model()->begin(), t->model()->end()});
    EXPECT_FALSE(t->layout().rankSections()[static_cast<size_t>(lateHost)].collapsed);
}

bool checked(const MainWindow& win, const char* action) {
    const auto* a = win.findChild<QAction*>(action);
    return a && a->isChecked();
}

TEST(RankViews, GroupingFoldsAndOneRowAreSavedPerFile) {
    const QString jobA = "/nonexistent/rank-layout-test/a.sqlite", jobB = "/nonexistent/rank-layout-test/b.sqlite";
    const auto open = [](MainWindow& win, const QString& path) {
        LoadedCapture l = lateRankJob();
        l.path = path;
        win.showLoaded(l);
    };
    const std::string lateHost = "synth-host-" + std::to_string(kLate / kPerHost);
    {
        MainWindow win;
        win.resize(1920, 1080);
        win.show();
        TimelineWidget* t = win.timeline();
        // What a run stopped half-way may have left for these paths goes first.
        for (const QString& path : {jobA, jobB}) {
            open(win, path);
            t->restoreRankView(SavedLayout{});
        }
        open(win, jobA);
        EXPECT_EQ(t->rankView().grouping(), RankGrouping::None);
        ASSERT_TRUE(applyRankView(&win, "host", false));
        int late = -1;
        for (size_t g = 0; g < t->model()->groups().size(); ++g)
            if (t->model()->processOf(static_cast<int>(g)).rank == kLate) late = static_cast<int>(g);
        ASSERT_EQ(foldHostOf(t, late), kLate / kPerHost);
        win.findChild<QAction*>("oneRowPerRank")->setChecked(true);
        ASSERT_TRUE(t->layout().oneRow());

        // Another file starts ungrouped, with the menu saying so.
        open(win, jobB);
        EXPECT_EQ(t->rankView().grouping(), RankGrouping::None);
        EXPECT_FALSE(t->rankView().oneRow());
        EXPECT_TRUE(t->rankView().collapsedKeys().empty());
        EXPECT_TRUE(t->layout().sections().empty());
        EXPECT_TRUE(checked(win, "groupRanks.none"));
        EXPECT_FALSE(checked(win, "oneRowPerRank"));

        // The first one again: as it was left.
        open(win, jobA);
        EXPECT_EQ(t->rankView().grouping(), RankGrouping::Host);
        EXPECT_TRUE(t->layout().oneRow());
        EXPECT_EQ(t->rankView().collapsedKeys(), std::set<std::string>{lateHost});
        EXPECT_TRUE(checked(win, "groupRanks.host"));
        EXPECT_TRUE(checked(win, "oneRowPerRank"));
        win.close();  // saves it
    }
    // A new window, as after a restart.
    MainWindow win;
    win.resize(1920, 1080);
    win.show();
    open(win, jobA);
    TimelineWidget* t = win.timeline();
    EXPECT_EQ(t->rankView().grouping(), RankGrouping::Host);
    EXPECT_TRUE(t->layout().oneRow());
    EXPECT_EQ(t->rankView().collapsedKeys(), std::set<std::string>{lateHost});
    ASSERT_EQ(t->layout().rankSections().size(), static_cast<size_t>(kRanks / kPerHost));
    EXPECT_TRUE(t->layout().rankSections()[kLate / kPerHost].collapsed);
    EXPECT_TRUE(checked(win, "groupRanks.host"));
    // Back to the default, which is what the file then keeps.
    t->restoreRankView(SavedLayout{});
    open(win, jobB);
    open(win, jobA);
    EXPECT_EQ(t->rankView().grouping(), RankGrouping::None);
}

TEST(RankViews, OneRowPerRankFitsThePage) {
    MainWindow win;
    win.resize(1920, 1080);
    win.show();
    win.showLoaded(lateRankJob());
    QApplication::processEvents();
    TimelineWidget* t = win.timeline();
    auto* oneRow = win.findChild<QAction*>("oneRowPerRank");
    ASSERT_TRUE(oneRow);
    EXPECT_EQ(oneRow->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_R));
    oneRow->trigger();
    QApplication::processEvents();
    ASSERT_TRUE(t->layout().oneRow());
    EXPECT_EQ(t->layout().lanes().size(), static_cast<size_t>(kRanks));
    EXPECT_LE(t->layout().totalHeight(), t->pageHeight());
    EXPECT_EQ(t->maxScrollY(), 0);
    oneRow->trigger();
    EXPECT_FALSE(t->layout().oneRow());
}

TEST(RankViews, PanelFramesACollectiveOnEveryRank) {
    MainWindow win;
    win.resize(1920, 1080);
    win.show();
    const LoadedCapture l = lateRankJob();
    win.showLoaded(l);
    ASSERT_TRUE(win.raisePanel("ranks"));
    auto* panel = win.findChild<RanksPanel*>();
    ASSERT_TRUE(panel);
    panel->model()->waitForSort();
    EXPECT_TRUE(panel->hint().isEmpty());
    ASSERT_EQ(panel->model()->rowCount(), static_cast<int>(l.analysis->matched.size()));
    ASSERT_GT(panel->model()->rowCount(), 0);
    // Every collective waited for the late rank.
    for (int r = 0; r < panel->model()->rowCount(); ++r)
        EXPECT_EQ(panel->model()->index(r, RankCollectiveModel::LastRank).data().toInt(), kLate) << "row " << r;
    TimelineWidget* t = win.timeline();
    const int last = panel->model()->rowCount() - 1;
    const RankCollectiveRow row = panel->model()->row(last);
    EXPECT_FALSE(t->selectedEvent().valid());
    emit panel->table()->clicked(panel->model()->index(last, 0));           // as a click on the row does
    EXPECT_LT(t->viewRange().length(), l.model->end() - l.model->begin());  // zoomed in on it
    EXPECT_LE(t->viewRange().start, row.start_ns);
    EXPECT_GE(t->viewRange().end, row.end_ns);
    ASSERT_TRUE(t->selectedEvent().valid());
    ASSERT_TRUE(t->selection());
    EXPECT_EQ(t->selection()->start, row.start_ns);
    EXPECT_EQ(t->selection()->end, row.end_ns);
    EXPECT_EQ(t->selectionGroups().size(), static_cast<size_t>(kRanks));
    // Selected on the lowest rank, outlined on the other fifteen.
    EXPECT_EQ(t->model()->processOf(t->model()->lane(t->selectedEvent().lane).group).rank, 0);
}

TEST(RankViews, HeatMapLatenessShowsTheLateRankThroughAPixelRowOfFour) {
    // 16 ranks on 4 pixel rows: rank 5's pixel row (ranks 4-7) is the
    // latest colour where its collectives start, and a click there is on rank 5.
    MainWindow win;
    win.resize(1400, 900);
    win.show();
    win.showLoaded(lateRankJob());
    win.heatMap()->setMetric(HeatMetric::Lateness);
    HeatMapView* view = win.heatMap()->view();
    view->setMinimumHeight(0);
    view->resize(HeatMapView::kLabelWidth + 400, HeatMapView::kHeaderHeight + 4);
    view->rebuild();
    const HeatMap& h = view->heatMap();
    ASSERT_EQ(h.rows(), kRanks);
    int late = -1;
    for (int r = 0; r < h.rows(); ++r)
        if (win.timeline()->model()->processOf(h.groups[static_cast<size_t>(r)]).rank == kLate) late = r;
    ASSERT_EQ(late, kLate);
    // Its arrivals are about 2 ms after the median, everyone else's about 0.
    int column = -1;
    for (int c = 0; c < h.columns && column < 0; ++c)
        if (h.at(late, c) == h.fullScale) column = c;
    ASSERT_GE(column, 0);
    EXPECT_GT(h.fullScale, 1.9e6f);
    EXPECT_LT(h.fullScale, 2.1e6f);
    for (int r = 0; r < h.rows(); ++r)
        if (r != late && !std::isnan(h.at(r, column))) {
            EXPECT_LT(h.at(r, column), 0.1f * h.fullScale) << r;
        }
    QImage img(view->size(), QImage::Format_RGB32);
    view->render(&img);
    const int x = HeatMapView::kLabelWidth + column, y = HeatMapView::kHeaderHeight + 1;  // ranks 4-7
    EXPECT_EQ(img.pixel(x, y) & 0xFFFFFF, heatColour(1.0f, HeatMetric::Lateness));
    EXPECT_EQ(view->cellAt({x, y}), (std::pair<int, int>{late, column}));
    EXPECT_TRUE(view->headerText().contains("the latest here: rank 5")) << view->headerText().toStdString();
}

TEST(RankViews, AClickOnARanksThinRowSelectsItsCollectiveOnEveryRank) {
    MainWindow win;
    win.resize(1920, 1080);
    win.show();
    const LoadedCapture l = lateRankJob();
    win.showLoaded(l);
    ASSERT_TRUE(applyRankView(&win, "none", true));
    QApplication::processEvents();
    TimelineWidget* t = win.timeline();
    // Rank 5's first all-reduce, in the middle of it.
    const DeviceAnalysis& d = l.analysis->devices[kLate];
    ASSERT_FALSE(d.collectives.empty());
    const CollectiveInstance& c = d.collectives.front();
    t->setViewRange({c.start_ns - 1'000'000, c.end_ns + 1'000'000});
    const int group = l.model->groupOf(d);
    const LaneSlot* row = t->layout().rankRowOf(group);
    ASSERT_TRUE(row);
    const QPoint at(static_cast<int>(t->xOf(c.start_ns + (c.end_ns - c.start_ns) / 2)),
                    TimelineWidget::kRulerHeight + row->y - t->scrollY() + row->height / 2);
    QTest::mouseClick(t, Qt::LeftButton, {}, at);
    const EventRef sel = t->selectedEvent();
    ASSERT_TRUE(sel.valid());
    EXPECT_EQ(l.model->lane(sel.lane).group, group);
    const EventRow& er = l.model->lane(sel.lane).rows[static_cast<size_t>(sel.row)];
    EXPECT_EQ(er.start[sel.index], c.start_ns);
    EXPECT_EQ(er.category[sel.index], static_cast<uint8_t>(Category::Communication));
    EXPECT_TRUE(win.detailsText().contains("arrival skew")) << win.detailsText().toStdString();
}

TEST(RankViews, SelectionOverEveryRankIsATableModelWithFixedColumns) {
    // Issue 40: 1,024 ranks froze the window for a minute while a table
    // widget sized 1,025 columns to their contents on every mouse move.
    constexpr int kMany = 80;
    MainWindow win;
    win.resize(1400, 900);
    win.show();
    const LoadedCapture l = guitest::analysed(guitest::smallCapture(kMany, 50));
    win.showLoaded(l);
    std::vector<int> all;
    for (size_t g = 0; g < l.model->groups().size(); ++g) all.push_back(static_cast<int>(g));
    win.timeline()->setSelection({3000, 8000}, all);
    QApplication::processEvents();
    auto* panel = win.findChild<SelectionPanel*>();
    ASSERT_TRUE(panel);
    EXPECT_TRUE(panel->findChildren<QTableWidget*>().isEmpty());
    const SelectionTableModel* m = panel->model();
    ASSERT_EQ(m->columnCount(), kMany + 1);
    ASSERT_EQ(m->rowCount(), SelectionTableModel::kMetricRows);
    EXPECT_EQ(panel->table()->horizontalHeader()->sectionResizeMode(0), QHeaderView::Interactive);
    // Against a brute force over each rank's known intervals (smallCapture,
    // rank r shifted by 50 r): C = [1000,5000) ∪ [6000,8000), M = [4000,7000).
    TimeNs overlapSum = 0, exposedSum = 0;
    for (int c = 1; c <= kMany; ++c) {
        const int rank = l.model->processOf(c - 1).rank;  // columns in group order, a group per rank
        EXPECT_EQ(m->headerData(c, Qt::Horizontal).toString(), QString("rank %1 · GPU 0").arg(rank));
        const TimeNs o = 50 * rank;
        TimeNs overlap = 0, exposed = 0;
        for (TimeNs t = 3000; t < 8000; ++t) {
            const bool inC = (t >= o + 1000 && t < o + 5000) || (t >= o + 6000 && t < o + 8000);
            const bool inM = t >= o + 4000 && t < o + 7000;
            overlap += inC && inM;
            exposed += inM && !inC;
        }
        EXPECT_EQ(m->column(c).overlap_ns, overlap) << rank;
        EXPECT_EQ(m->column(c).exposed_comm_ns, exposed) << rank;
        overlapSum += overlap;
        exposedSum += exposed;
    }
    EXPECT_EQ(m->headerData(0, Qt::Horizontal).toString(), QString("sum of %1 devices").arg(kMany));
    EXPECT_EQ(m->column(0).overlap_ns, overlapSum);
    EXPECT_EQ(m->column(0).exposed_comm_ns, exposedSum);
    EXPECT_TRUE(panel->text().contains(QString("sum of %1 devices\trank 0 · GPU 0").arg(kMany)));
}

TEST(RankViews, TheMeshTracesCollectivesByCommunicator) {
    // examples/h200/pytorch_mesh_torch_profiler: tensor-parallel groups
    // {0,1} and {2,3} (70 all-reduces each), data-parallel {0,2} and {1,3} (80).
    const LoadedCapture l =
        loadForViewing(QString(OSC_TEST_EXAMPLES) + "/h200/pytorch_mesh_torch_profiler", {}, nullptr, {});
    MainWindow win;
    win.resize(1600, 900);
    win.show();
    win.showLoaded(l);
    ASSERT_TRUE(win.raisePanel("ranks"));
    auto* panel = win.findChild<RanksPanel*>();
    RankCollectiveModel* m = panel->model();
    m->waitForSort();
    ASSERT_EQ(m->rowCount(), 300);
    std::map<std::string, int> byLabel;
    for (const RankCommunicator& c : m->communicators()) byLabel[c.label] = c.collectives;
    EXPECT_EQ(byLabel, (std::map<std::string, int>{
                           {"ranks 0–1", 70}, {"ranks 2–3", 70}, {"ranks 0, 2", 80}, {"ranks 1, 3", 80}}));
    for (int r = 0; r < m->rowCount(); ++r)
        EXPECT_NE(m->index(r, RankCollectiveModel::Group).data().toString(), "–") << r;
    // Filtered to one group: its rows only.
    auto* combo = panel->findChild<QComboBox*>();
    ASSERT_TRUE(combo && combo->isVisibleTo(panel));
    EXPECT_EQ(combo->count(), 5);
    const int dp = combo->findText("ranks 1, 3", Qt::MatchStartsWith);
    ASSERT_GE(dp, 0);
    panel->filterCommunicator(combo->itemData(dp).toInt());
    m->waitForSort();
    ASSERT_EQ(m->rowCount(), 80);
    for (int r = 0; r < m->rowCount(); ++r)
        EXPECT_EQ(m->index(r, RankCollectiveModel::Group).data().toString(), "ranks 1, 3") << r;
    EXPECT_EQ(combo->currentIndex(), dp);
    // All again, grouped: each communicator's rows together, in time order.
    panel->filterCommunicator(-1);
    panel->groupByCommunicator(true);
    m->waitForSort();
    ASSERT_EQ(m->rowCount(), 300);
    EXPECT_TRUE(panel->findChild<QCheckBox*>()->isChecked());
    for (int r = 1; r < m->rowCount(); ++r) {
        const RankCollectiveRow &a = m->row(r - 1), &b = m->row(r);
        ASSERT_LE(a.communicator, b.communicator) << r;
        if (a.communicator == b.communicator) {
            EXPECT_LE(a.start_ns, b.start_ns) << r;
        }
    }
    panel->groupByCommunicator(false);
    m->waitForSort();
    for (int r = 1; r < m->rowCount(); ++r) EXPECT_LE(m->row(r - 1).start_ns, m->row(r).start_ns) << r;
}

}  // namespace

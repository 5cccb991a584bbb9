// Many ranks in the window (issue 30 item 3): the View menu's grouping and
// one row per rank acting on the timeline, a click on a host's header, Find,
// Details links and the heat map unfolding a folded header, the rank view
// saved per file, and the Collectives across ranks panel framing a
// collective on every rank.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/synth/workload_synth.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/rank_menu.h"
#include "gui/widgets/rank_panel.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/analysed_capture.h"

#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTest>

#include <algorithm>
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

}  // namespace

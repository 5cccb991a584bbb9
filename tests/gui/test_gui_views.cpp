// The statistics view, the heat map and the overview strip: their models
// against hand-worked captures and brute force, and their widgets driven as
// a user drives them (offscreen).
#include "analyzer/crossrank/analyze.h"
#include "gui/model/event_details.h"
#include "gui/model/heat_map.h"
#include "gui/model/hover_text.h"
#include "gui/model/kernel_stats.h"
#include "gui/model/overview.h"
#include "gui/render/palette.h"
#include "gui/widgets/heat_map_widget.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/overview_strip.h"
#include "gui/widgets/statistics_panel.h"
#include "gui/widgets/timeline_frame.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/analysed_capture.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>
#include <QApplication>
#include <QImage>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>

#include <cmath>
#include <random>

using namespace osc;
using namespace osc::gui;

namespace {

using guitest::analysed;

const KernelStatsRow* rowNamed(const std::vector<KernelStatsRow>& rows, const std::string& name) {
    for (const auto& r : rows)
        if (r.name == name) return &r;
    return nullptr;
}

}  // namespace

// Two ranks of the small capture: gemm [1000,5000) and [6000,8000) per rank
// (4 runs: 4000, 2000, 4000, 2000), one AllReduce of 3000 per rank, one
// 400 ns HtoD copy per rank. Summed: 12000 + 6000 + 800 = 18800 ns.
TEST(KernelStats, HandWorkedCountsMediansSharesAndLongest) {
    const TimelineModel m(guitest::smallCapture(2, 100));
    const auto rows = kernelStats(m, StatsGrouping::Name, {});
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].name, "gemm_kernel");  // largest total first
    const KernelStatsRow& g = rows[0];
    EXPECT_EQ(g.count, 4u);
    EXPECT_EQ(g.total, 12000);
    EXPECT_DOUBLE_EQ(g.mean, 3000);
    EXPECT_EQ(g.median, 2000);  // lower median of {2000, 2000, 4000, 4000}
    EXPECT_EQ(g.min, 2000);
    EXPECT_EQ(g.max, 4000);
    EXPECT_NEAR(g.share, 12000.0 / 18800.0, 1e-12);
    EXPECT_EQ(g.longest, m.findKernel(0, 0));  // the first of the two 4 us runs
    const KernelStatsRow* copy = rowNamed(rows, "memcpy HtoD");
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(copy->count, 2u);
    EXPECT_NEAR(copy->share, 800.0 / 18800.0, 1e-12);
    // A window on rank 1 only: events starting in [0, 5000) there.
    const auto windowed = kernelStats(m, StatsGrouping::Name, {{{1, ViewRange{0, 5000}}}});
    const KernelStatsRow* gw = rowNamed(windowed, "gemm_kernel");
    ASSERT_NE(gw, nullptr);
    EXPECT_EQ(gw->count, 1u);  // rank 1's [1100, 5100)
    EXPECT_EQ(gw->longest, m.findKernel(1, 0));
}

TEST(KernelStats, SignaturesSplitANameByLaunchShapeAndMatchBruteForce) {
    auto c = std::make_shared<Capture>();
    Process p;
    p.rank = 0;
    Device& d = p.deviceById(0);
    std::mt19937 rng(4);
    std::map<std::pair<std::string, uint32_t>, std::vector<TimeNs>> truth;
    TimeNs t = 0;
    for (int i = 0; i < 3000; ++i) {
        const std::string name = i % 3 ? "gemm" : "relu";
        const uint32_t grid = 1 + rng() % 3;
        const TimeNs len = 1 + static_cast<TimeNs>(rng() % 500);
        guitest::addKernel(*c, d, t, t + len, 7 + static_cast<uint32_t>(i % 2), name);
        d.kernels.gridX.back() = grid;
        truth[{name, grid}].push_back(len);
        t += 1 + static_cast<TimeNs>(rng() % 300);
    }
    c->processes.push_back(std::move(p));
    c->finalize();
    const TimelineModel m(c);
    const auto rows = kernelStats(m, StatsGrouping::Signature, {});
    ASSERT_EQ(rows.size(), truth.size());
    for (const auto& r : rows) {
        auto durations = truth.at({r.name, r.grid[0]});
        std::sort(durations.begin(), durations.end());
        EXPECT_EQ(r.count, durations.size());
        EXPECT_EQ(r.min, durations.front());
        EXPECT_EQ(r.max, durations.back());
        EXPECT_EQ(r.median, durations[(durations.size() - 1) / 2]);
        TimeNs total = 0;
        for (TimeNs v : durations) total += v;
        EXPECT_EQ(r.total, total);
        const EventRow& row = m.lane(r.longest.lane).rows[0];
        EXPECT_EQ(row.end[r.longest.index] - row.start[r.longest.index], durations.back());
    }
}

TEST(KernelStats, ShortNamesDropVoidAndParameters) {
    EXPECT_EQ(shortKernelName("void at::native::foo<float, (int)4>(float*, int)"), "at::native::foo<float, (int)4>");
    EXPECT_EQ(shortKernelName("void at::native::(anonymous namespace)::bar<4>(int)"),
              "at::native::(anonymous namespace)::bar<4>");
    EXPECT_EQ(shortKernelName("gemm_kernel"), "gemm_kernel");
}

TEST(StatisticsPanel, ScopesFollowStepsAndTheSelectionAndAClickJumpsToTheLongest) {
    auto capture = guitest::smallCapture(2, 100);
    for (auto& p : capture->processes) p.ranges.onGpu.assign(p.ranges.size(), 1);  // GPU-side steps
    const LoadedCapture l = analysed(capture);
    MainWindow win;
    win.resize(1400, 900);
    win.showLoaded(l);
    StatisticsPanel* stats = win.statistics();
    stats->waitForResult();
    ASSERT_EQ(stats->tableModel()->rowCount(), 3);
    EXPECT_EQ(stats->tableModel()->index(0, StatsTableModel::Count).data().toString(), "4");
    // The step scope: ProfilerStep#1's GPU window on each device holds every event.
    ASSERT_TRUE(stats->setScope("step: ProfilerStep#1"));
    stats->waitForResult();
    EXPECT_EQ(stats->tableModel()->rowCount(), 3);
    // The selected range: rank 0 over [0, 3000) starts the copy and one gemm.
    ASSERT_TRUE(stats->setScope("selected range"));
    win.timeline()->setSelection({0, 3000}, {0});
    stats->waitForResult();
    ASSERT_EQ(stats->tableModel()->rowCount(), 2);
    // A click on the gemm row: the timeline shows its longest run.
    int gemm = -1;
    for (int r = 0; r < 2; ++r)
        if (stats->tableModel()->rowAt(r).name == "gemm_kernel") gemm = r;
    ASSERT_GE(gemm, 0);
    stats->jumpTo(gemm);
    EXPECT_EQ(win.timeline()->selectedEvent(), l.model->findKernel(0, 0));
    EXPECT_EQ(win.timeline()->viewRange(), (ViewRange{600, 5400}));
}

TEST(HeatMap, CellsEqualBruteForceOverlapRatiosAndExposedShares) {
    // Ranks shifted by 1000: per-ns truth from the capture's kernels.
    const auto c = guitest::smallCapture(3, 1000);
    const TimelineModel m(c);
    const ViewRange range{0, 12'000};
    for (HeatMetric metric : {HeatMetric::OverlapRatio, HeatMetric::ExposedShare}) {
        const HeatMap h = heatMapByTime(m, range, 24, metric);
        ASSERT_EQ(h.rows(), 3);
        for (int r = 0; r < 3; ++r) {
            const TimeNs o = 1000 * r;
            // C = [1000,5000) ∪ [6000,8000), M = [4000,7000), shifted by o.
            auto inC = [&](TimeNs t) { return (t >= o + 1000 && t < o + 5000) || (t >= o + 6000 && t < o + 8000); };
            auto inM = [&](TimeNs t) { return t >= o + 4000 && t < o + 7000; };
            for (int col = 0; col < 24; ++col) {
                const ViewRange w = h.window(r, col);
                TimeNs comm = 0, hidden = 0;
                for (TimeNs t = w.start; t < w.end; ++t) {
                    comm += inM(t);
                    hidden += inM(t) && inC(t);
                }
                const float v = h.at(r, col);
                if (metric == HeatMetric::OverlapRatio) {
                    if (comm == 0)
                        EXPECT_TRUE(std::isnan(v)) << r << " " << col;
                    else
                        EXPECT_NEAR(v, static_cast<double>(hidden) / static_cast<double>(comm), 1e-6)
                            << r << " " << col;
                } else {
                    EXPECT_NEAR(v, static_cast<double>(comm - hidden) / static_cast<double>(w.length()), 1e-6)
                        << r << " " << col;
                }
            }
        }
    }
    EXPECT_EQ(worstOf(0.2f, 0.7f, HeatMetric::OverlapRatio), 0.2f);
    EXPECT_EQ(worstOf(0.2f, 0.7f, HeatMetric::ExposedShare), 0.7f);
    EXPECT_EQ(worstOf(std::nanf(""), 0.7f, HeatMetric::OverlapRatio), 0.7f);
}

TEST(HeatMap, ClickingACellZoomsTheTimelineThereAndScrollsToTheRank) {
    MainWindow win;
    win.resize(1400, 900);
    win.show();
    win.showLoaded(analysed(guitest::smallCapture(20, 500)));  // 20 ranks: the heat map is raised
    HeatMapView* view = win.heatMap()->view();
    view->resize(110 + 200, 400);
    view->rebuild();
    const HeatMap& h = view->heatMap();
    ASSERT_EQ(h.rows(), 20);
    ASSERT_EQ(h.columns, 200);
    // Rank 13's row, column 100: ten times closer around that bucket, and
    // rank 13's header on top.
    const QPoint at = view->cellCentre(13, 100);
    EXPECT_EQ(view->cellAt(at), (std::pair<int, int>{13, 100}));
    const ViewRange bucket = h.window(13, 100);
    const TimeNs len = h.range.length() / 10, centre = bucket.start + bucket.length() / 2;
    QTest::mouseClick(view, Qt::LeftButton, {}, at);
    EXPECT_EQ(win.timeline()->viewRange(), win.timeline()->limits().clamp({centre - len / 2, centre - len / 2 + len}));
    const int group = h.groups[13];
    ASSERT_EQ(win.timeline()->model()->processOf(group).rank, 13);
    int headerY = -1;
    for (const GroupSlot& g : win.timeline()->layout().groups())
        if (g.group == group) headerY = g.y;
    EXPECT_EQ(win.timeline()->scrollY(), std::min(headerY, win.timeline()->maxScrollY()));
}

TEST(HeatMap, ManyRanksPerPixelRowShowTheWorst) {
    // 64 ranks on 16 pixel rows: rank 37 alone never overlaps (its
    // communication is moved after its compute); its pixel row must show it.
    auto c = guitest::smallCapture(64, 0);
    Device& d = c->processes[37].devices[0];
    d.kernels.start[1] = 9000;  // the AllReduce, after both gemms
    d.kernels.end[1] = 9500;
    c->finalize();
    auto model = std::make_shared<TimelineModel>(c);
    TimelineWidget timeline;
    timeline.resize(800, 600);
    timeline.setModel(model);
    timeline.setViewRange({0, 10'000});
    HeatMapView view(&timeline);
    view.setMinimumHeight(0);
    view.resize(HeatMapView::kLabelWidth + 100, HeatMapView::kHeaderHeight + 16);
    view.rebuild();
    QImage img(view.size(), QImage::Format_RGB32);
    view.render(&img);
    const int pixelRow = 37 * 16 / 64;  // 9: ranks 36 to 39
    const int y = HeatMapView::kHeaderHeight + pixelRow;
    // The column holding t = 9250: only rank 37 communicates there, all of it exposed.
    int column = -1;
    for (int k = 0; k < view.heatMap().columns; ++k)
        if (view.heatMap().window(0, k).start <= 9250 && 9250 < view.heatMap().window(0, k).end) column = k;
    ASSERT_GE(column, 0);
    EXPECT_EQ(view.heatMap().at(37, column), 0.0f) << column << " " << view.heatMap().window(0, column).start;
    const int x = HeatMapView::kLabelWidth + column;
    EXPECT_EQ(img.pixel(x, y) & 0xFFFFFF, heatColour(0.0f, HeatMetric::OverlapRatio));
    EXPECT_EQ(img.pixel(x, y + 2) & 0xFFFFFF, heatColour(std::nanf(""), HeatMetric::OverlapRatio));
}

TEST(HeatMap, SaysWhichRanksItLabelsWhenNotAllFit) {
    // Issue 30 item 3: 64 ranks on 64 and on 16 pixel rows.
    auto model = std::make_shared<TimelineModel>(guitest::smallCapture(64, 0));
    TimelineWidget timeline;
    timeline.resize(800, 600);
    timeline.setModel(model);
    HeatMapView view(&timeline);
    view.setMinimumHeight(0);
    const int line = QFontMetrics(view.font()).height();
    for (const int pixelRows : {64 * line, 16}) {
        view.resize(HeatMapView::kLabelWidth + 100, HeatMapView::kHeaderHeight + pixelRows);
        view.rebuild();
        const int every = view.labelStride();
        // Labels every `every` rows never overlap, and one row fewer would.
        EXPECT_GE(every * pixelRows, 64 * line) << pixelRows;
        EXPECT_LT((every - 1) * pixelRows, 64 * line) << pixelRows;
        const bool all = pixelRows >= 64 * line;
        EXPECT_EQ(every == 1, all) << pixelRows;
        EXPECT_EQ(view.headerText().contains(QString("a label every %1 rows").arg(every)), !all)
            << view.headerText().toStdString();
        EXPECT_TRUE(view.headerText().startsWith("64 GPUs")) << view.headerText().toStdString();
    }
}

double colourDistance(uint32_t a, uint32_t b) {
    const auto ch = [](uint32_t c, int shift) { return static_cast<double>((c >> shift) & 0xFF); };
    return std::hypot(ch(a, 16) - ch(b, 16), ch(a, 8) - ch(b, 8), ch(a, 0) - ch(b, 0));
}

TEST(Palette, OneColourOneMeaning) {
    // Issue 30 item 11: amber meant "waiting for the last rank" in the
    // timeline and "50 % overlap" in the heat map. Every colour that means
    // something stays apart from every other, and the heat map's ramps keep
    // away from amber (and from the grey of "no communication").
    constexpr double kApart = 55;
    const auto& m = palette::kMeanings;
    for (size_t i = 0; i < std::size(m); ++i)
        for (size_t j = i + 1; j < std::size(m); ++j)
            EXPECT_GE(colourDistance(m[i], m[j]), kApart) << std::hex << m[i] << " vs " << m[j];
    for (int i = 0; i <= 100; ++i) {
        const float v = static_cast<float>(i) / 100.f;
        for (HeatMetric metric : {HeatMetric::OverlapRatio, HeatMetric::ExposedShare}) {
            const uint32_t c = heatColour(v, metric);
            EXPECT_GE(colourDistance(c, palette::kExposedWait), kApart) << v;
            EXPECT_GE(colourDistance(c, palette::kHighlight), kApart) << v;
        }
        EXPECT_GE(colourDistance(heatColour(v, HeatMetric::OverlapRatio), palette::kHeatNoComm), 30) << v;
    }
    EXPECT_EQ(heatColour(0.5f, HeatMetric::OverlapRatio), palette::kHeatMiddle);
    EXPECT_EQ(heatColour(std::nanf(""), HeatMetric::OverlapRatio), palette::kHeatNoComm);
}

TEST(Overview, ColumnsAverageComputeHiddenAndExposedOverGpus) {
    const TimelineModel m(guitest::smallCapture(2, 1000));
    const Overview o = buildOverview(m, {0, 10'000}, 10);  // 1 us per column
    ASSERT_EQ(o.columns.size(), 10u);
    // Column [4000, 5000): rank 0 compute 1, hidden 1; rank 1 (shifted) compute 1, comm 0.
    EXPECT_FLOAT_EQ(o.columns[4].compute, 1.0f);
    EXPECT_FLOAT_EQ(o.columns[4].hidden, 0.5f);
    EXPECT_FLOAT_EQ(o.columns[4].exposed, 0.0f);
    // Column [5000, 6000): rank 0 exposed 1, no compute; rank 1 compute and hidden 1.
    EXPECT_FLOAT_EQ(o.columns[5].compute, 0.5f);
    EXPECT_FLOAT_EQ(o.columns[5].hidden, 0.5f);
    EXPECT_FLOAT_EQ(o.columns[5].exposed, 0.5f);
}

TEST(HoverText, TheOverlapLaneDescribesTheCollectiveUnderTheCursor) {
    // Rank 0's AllReduce [4000, 7000): hidden 2000 (under the gemms), exposed
    // 1000; rank 1 starts 1500 later, so [5000, 5500) of the exposed part is
    // waiting for it (see the model test of the same capture).
    const LoadedCapture l = analysed(guitest::smallCapture(2, 1500));
    const TimelineModel& m = *l.model;
    const int overlapLane = m.groups()[0].lanes[1];
    ASSERT_EQ(m.lane(overlapLane).kind, LaneKind::Overlap);
    const TimeScale s({0, 10'000}, 1000);                                             // 10 ns per px
    const std::string text = hoverText(m, l.analysis.get(), overlapLane, 0, s, 560);  // t = 5600
    EXPECT_EQ(text, "AllReduce f32 · 3 µs: hidden 2 µs, exposed 1 µs (of which waiting for the last rank 500 ns)")
        << text;
    // Between collectives, and on a GPU without any.
    EXPECT_EQ(hoverText(m, l.analysis.get(), overlapLane, 0, s, 200), "no communication here");
    auto computeOnly = std::make_shared<Capture>(*guitest::smallCapture());
    auto& k = computeOnly->processes[0].devices[0].kernels;
    k.name[1] = k.shortName[1] = computeOnly->strings.intern("relu_kernel");
    const TimelineModel cm(computeOnly);
    EXPECT_EQ(hoverText(cm, nullptr, cm.groups()[0].lanes[1], 0, s, 560), "no communication on this GPU");
    // An event lane: the kernel and its duration, then where it ran (the
    // test capture's gemm on stream 7, launched with the default shape).
    EXPECT_EQ(hoverText(m, l.analysis.get(), m.groups()[0].lanes[2], 0, s, 200),
              "gemm_kernel · 4 µs\nstream 7 · grid 1×1×1 · block 1×1×1\ncorrelation 0");
}

TEST(EmptyStates, TablesSayWhyTheyAreEmptyAndTheTimelineHowToStart) {
    MainWindow win;
    win.resize(1200, 800);
    win.show();
    // Nothing open: the timeline's middle holds the hint text (dark pixels on white).
    QImage img(win.timeline()->size(), QImage::Format_RGB32);
    win.timeline()->render(&img);
    int text = 0;
    const int y0 = img.height() / 2 - 20, y1 = img.height() / 2 + 20;
    for (int y = y0; y < y1; ++y)
        for (int x = TimelineWidget::kLabelWidth; x < img.width(); ++x)
            text += (img.pixel(x, y) & 0xFFFFFF) == palette::kEmptyText;
    EXPECT_GT(text, 20);
    // A capture with communication but no steps (the NVTX range is CPU-side, never projected).
    win.showLoaded(analysed(guitest::smallCapture()));
    EXPECT_TRUE(win.stepsHint().startsWith("No steps in this capture")) << win.stepsHint().toStdString();
    EXPECT_TRUE(win.collectivesHint().isEmpty());
    // Compute only: no communication to list.
    auto computeOnly = std::make_shared<Capture>(*guitest::smallCapture());
    auto& k = computeOnly->processes[0].devices[0].kernels;
    k.name[1] = k.shortName[1] = computeOnly->strings.intern("relu_kernel");
    win.showLoaded(analysed(computeOnly));
    EXPECT_TRUE(win.collectivesHint().startsWith("No communication in this capture"))
        << win.collectivesHint().toStdString();
}

TEST(TimelineFrame, ScrollbarFollowsTheLanesAndTheHeaderStaysPinned) {
    TimelineFrame frame;
    frame.resize(1000, 300);
    frame.show();
    auto model = std::make_shared<TimelineModel>(guitest::smallCapture(4, 100));
    frame.timeline()->setModel(model);
    QApplication::processEvents();
    TimelineWidget* t = frame.timeline();
    ASSERT_GT(t->maxScrollY(), 0);
    EXPECT_EQ(frame.scrollBar()->maximum(), t->maxScrollY());
    frame.scrollBar()->setValue(60);
    EXPECT_EQ(t->scrollY(), 60);
    // Rank 0's header (content y 0) has scrolled away while its lanes are on
    // screen: it is drawn under the ruler, and a click there folds rank 0.
    QImage img(t->size(), QImage::Format_RGB32);
    t->render(&img);
    const int y = TimelineWidget::kRulerHeight + 4;
    EXPECT_EQ(img.pixel(TimelineWidget::kLabelWidth + 300, y) & 0xFFFFFF, palette::kHeader);
    QTest::mouseClick(t, Qt::LeftButton, {}, {TimelineWidget::kLabelWidth + 300, y});
    EXPECT_TRUE(model->groups()[0].collapsed);
    // Scrolling the timeline moves the scrollbar too.
    t->setScrollY(0);
    EXPECT_EQ(frame.scrollBar()->value(), 0);
}

TEST(TimelineFrame, ClickingTheOverviewMovesTheViewThere) {
    TimelineFrame frame;
    frame.resize(TimelineWidget::kLabelWidth + 936 + 20, 400);
    frame.show();
    auto model = std::make_shared<TimelineModel>(guitest::smallCapture());
    frame.timeline()->setModel(model);
    QApplication::processEvents();
    frame.timeline()->setViewRange({1000, 2000});
    OverviewStrip* o = frame.overview();
    ASSERT_FALSE(o->overview().columns.empty());
    const int x = static_cast<int>(std::lround(o->xOf(6000)));
    QTest::mouseClick(o, Qt::LeftButton, {}, {x, OverviewStrip::kHeight / 2});
    const ViewRange v = frame.timeline()->viewRange();
    EXPECT_EQ(v.length(), 1000);
    EXPECT_NEAR(static_cast<double>(v.start + v.length() / 2), 6000.0, 20.0);  // within a column
}

// The widgets under QT_QPA_PLATFORM=offscreen: pixels at computed positions,
// zoom/pan/selection through synthesised input, panel models.
#include "analyzer/synth/generic_synth.h"
#include "gui/model/range_metrics.h"
#include "gui/model/time_ticks.h"
#include "gui/render/palette.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <set>

using namespace osc;
using namespace osc::gui;

namespace {

// The small capture runs over [0, 9000); Fit all adds 2% (180 ns) on each
// side, and those bounds are also as far as the view may go. 936 px make
// the fitted view [-180, 9180) exactly 10 ns per pixel.
constexpr int kEventWidth = 936;

struct Fixture {
    std::shared_ptr<TimelineModel> model = std::make_shared<TimelineModel>(guitest::smallCapture());
    TimelineWidget w;
    Fixture() {
        w.resize(TimelineWidget::kLabelWidth + kEventWidth, 400);
        w.setModel(model);
        EXPECT_EQ(w.eventAreaWidth(), kEventWidth);
        EXPECT_EQ(w.viewRange(), (ViewRange{-180, 9180}));
    }
    int x(TimeNs t) const { return TimelineWidget::kLabelWidth + static_cast<int>((t + 180) / 10); }
    int laneMid(int laneInGroup) const {
        const int lane = model->groups()[0].lanes[static_cast<size_t>(laneInGroup)];
        return w.laneY(lane) + w.layout().slotOf(lane)->rowHeight / 2;
    }
    QImage grab() {
        QImage img(w.size(), QImage::Format_ARGB32);
        w.render(&img);
        return img;
    }
};

uint32_t rgbAt(const QImage& img, int x, int y) { return img.pixel(x, y) & 0xFFFFFF; }

void wheel(QWidget& w, QPoint pos, int delta, Qt::KeyboardModifiers mods) {
    QWheelEvent e(pos, w.mapToGlobal(pos), {}, {0, delta}, Qt::NoButton, mods, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(&w, &e);
}

}  // namespace

TEST(TimelineWidget, PaintsComputeOverlapAndExposedWhereTheyRun) {
    Fixture f;
    const QImage img = f.grab();
    // A compute kernel's colour where it runs, the background where it does not.
    EXPECT_EQ(rgbAt(img, f.x(2000), f.laneMid(2)), palette::kCompute);
    EXPECT_NE(rgbAt(img, f.x(5500), f.laneMid(2)), palette::kCompute);
    // The AllReduce on its stream.
    EXPECT_EQ(rgbAt(img, f.x(4500), f.laneMid(3)), palette::kCommunication);
    // Overlap lane: green where compute and communication coincide, vermilion
    // where only communication runs, nothing where there is no communication.
    EXPECT_EQ(rgbAt(img, f.x(4500), f.laneMid(1)), palette::kOverlap);
    EXPECT_EQ(rgbAt(img, f.x(6500), f.laneMid(1)), palette::kOverlap);
    EXPECT_EQ(rgbAt(img, f.x(5500), f.laneMid(1)), palette::kExposed);
    EXPECT_NE(rgbAt(img, f.x(2000), f.laneMid(1)), palette::kOverlap);
    EXPECT_NE(rgbAt(img, f.x(2000), f.laneMid(1)), palette::kExposed);
    // The memcpy on stream 20 (near the top edge: its label covers the middle).
    EXPECT_EQ(rgbAt(img, f.x(700), f.laneMid(4) - 6), palette::kMemory);
    if (::testing::Test::HasFailure())
        img.save(QString::fromStdString(::testing::TempDir()) + "/test_gui_widget_failure.png");
}

TEST(TimelineWidget, ASelectionNearATickNeverCutsItsLabel) {
    // Issue 30 item 13: "1.|28.78 ms": the selection's length box was drawn
    // over the start of a tick label and the rest of the label showed.
    Fixture f;
    ASSERT_EQ(makeRuler(f.w.scale()).ticks.size() > 2, true);
    // Ticks every 1 µs; a 50 ns selection 30 px before the 1 µs tick: its
    // box ends a few px after the tick, inside the tick's label.
    f.w.setSelection({700, 750}, {0});
    const QImage img = f.grab();
    const int tick = f.x(1000);
    int dark = 0;
    for (int x = tick + 3; x < tick + 60; ++x)
        for (int y = 1; y < TimelineWidget::kRulerHeight - 8; ++y) dark += qGray(img.pixel(x, y)) < 110;
    // Inside the box the length is drawn in the selection colour (not dark);
    // no piece of the tick's dark label may show beside it.
    EXPECT_EQ(dark, 0);
    // Away from the selection the labels are all there.
    int labelled = 0;
    for (int x = f.x(5000) + 3; x < f.x(5000) + 40; ++x)
        for (int y = 1; y < TimelineWidget::kRulerHeight - 8; ++y) labelled += qGray(img.pixel(x, y)) < 110;
    EXPECT_GT(labelled, 10);
    EXPECT_TRUE(rulerLabelHidden(100, 130, 90, 110));
    EXPECT_FALSE(rulerLabelHidden(100, 130, 40, 90));
    if (::testing::Test::HasFailure())
        img.save(QString::fromStdString(::testing::TempDir()) + "/test_gui_widget_ruler.png");
}

TEST(TimelineWidget, CtrlWheelZoomsAtTheCursor) {
    Fixture f;
    QSignalSpy spy(&f.w, &TimelineWidget::viewRangeChanged);
    wheel(f.w, {f.x(4500), 100}, 120, Qt::ControlModifier);
    // One notch: span 9360 x 0.8 = 7488 with t = 4500 kept at the centre.
    EXPECT_EQ(f.w.viewRange(), (ViewRange{756, 8244}));
    EXPECT_EQ(spy.count(), 1);
    // Zooming out anchored at the left edge would run past the end of the
    // capture's bounds: it stops there, at the fitted view.
    wheel(f.w, {TimelineWidget::kLabelWidth, 100}, -120, Qt::ControlModifier);
    EXPECT_EQ(f.w.viewRange(), (ViewRange{-180, 9180}));
    // A plain wheel scrolls lanes, not time.
    wheel(f.w, {f.x(5000), 100}, -120, Qt::NoModifier);
    EXPECT_EQ(f.w.viewRange(), (ViewRange{-180, 9180}));
}

TEST(TimelineWidget, KeyboardZoomPanFitAndBack) {
    Fixture f;
    QTest::keyClick(&f.w, Qt::Key_D);  // everything is in view: nowhere to pan
    EXPECT_EQ(f.w.viewRange(), (ViewRange{-180, 9180}));
    QTest::keyClick(&f.w, Qt::Key_W);  // zoom in 0.8 around the centre (t = 4500)
    EXPECT_EQ(f.w.viewRange(), (ViewRange{756, 8244}));
    QTest::keyClick(&f.w, Qt::Key_D);  // 10% of 936 px at 8 ns/px = 748.8 -> 749 ns
    EXPECT_EQ(f.w.viewRange(), (ViewRange{1505, 8993}));
    QTest::keyClick(&f.w, Qt::Key_A);
    EXPECT_EQ(f.w.viewRange(), (ViewRange{756, 8244}));
    QTest::keyClick(&f.w, Qt::Key_D);
    QTest::keyClick(&f.w, Qt::Key_D);  // [2254, 9742) would end past 9180: stops at the edge
    EXPECT_EQ(f.w.viewRange(), (ViewRange{1692, 9180}));
    QTest::keyClick(&f.w, Qt::Key_S);  // zooming out stops at the bounds
    EXPECT_EQ(f.w.viewRange(), (ViewRange{-180, 9180}));
    QTest::keyClick(&f.w, Qt::Key_Backspace);
    EXPECT_EQ(f.w.viewRange(), (ViewRange{1692, 9180}));
    QTest::keyClick(&f.w, Qt::Key_F);  // nothing selected: fit everything, 2% margins
    EXPECT_EQ(f.w.viewRange(), (ViewRange{-180, 9180}));
}

TEST(TimelineWidget, NeverPansBeforeTheCaptureNorZoomsBelowTheFloor) {
    Fixture f;
    f.w.setViewRange({1000, 2000});
    f.w.panByPixels(-100000);  // far to the left: stops at the start bound
    EXPECT_EQ(f.w.viewRange(), (ViewRange{-180, 820}));
    f.w.setViewRange({4000, 4010});  // below the zoom floor: widened around its centre
    EXPECT_EQ(f.w.viewRange(), (ViewRange{3955, 4055}));
    f.w.zoomBy(0.01, 468);
    EXPECT_EQ(f.w.viewRange().length(), ViewLimits::kZoomFloorNs);
    // Revealing an event near the start centres it only as far as the bounds allow.
    f.w.setViewRange({5000, 7000});
    f.w.selectEvent(f.model->findOnStream(0, 20, 500, EventSource::Copy), true);
    EXPECT_EQ(f.w.viewRange(), (ViewRange{-180, 1820}));
}

TEST(TimelineWidget, DragSelectsARangeWithItsMetrics) {
    Fixture f;
    QSignalSpy spy(&f.w, &TimelineWidget::selectionChanged);
    const int y = f.laneMid(2);
    QTest::mousePress(&f.w, Qt::LeftButton, {}, {f.x(3000), y});
    QTest::mouseMove(&f.w, {f.x(6000), y});
    EXPECT_GE(spy.count(), 1);  // updated while dragging
    ASSERT_TRUE(f.w.selection());
    EXPECT_EQ(*f.w.selection(), (ViewRange{3000, 6000}));
    QTest::mouseMove(&f.w, {f.x(8000), y});
    QTest::mouseRelease(&f.w, Qt::LeftButton, {}, {f.x(8000), y});
    ASSERT_TRUE(f.w.selection());
    EXPECT_EQ(*f.w.selection(), (ViewRange{3000, 8000}));
    EXPECT_EQ(f.w.selectionGroups(), std::vector<int>{0});
    const OverlapMetrics m = rangeMetrics(*f.model, f.w.selectionGroups(), 3000, 8000);
    EXPECT_EQ(m.overlap_ns, 2000);
    EXPECT_EQ(m.exposed_comm_ns, 1000);
    // F fits the selection, Backspace returns, Esc clears.
    QTest::keyClick(&f.w, Qt::Key_F);
    EXPECT_EQ(f.w.viewRange(), (ViewRange{3000, 8000}));
    QTest::keyClick(&f.w, Qt::Key_Backspace);
    EXPECT_EQ(f.w.viewRange(), (ViewRange{-180, 9180}));
    QTest::keyClick(&f.w, Qt::Key_Escape);
    EXPECT_FALSE(f.w.selection());
}

TEST(TimelineWidget, DoubleClickZoomsToTheEventNotAnOlderSelection) {
    Fixture f;
    f.w.setSelection({3000, 8000}, {0});
    // The gemm [1000, 5000) on stream 7: 10% of its 4 us on each side.
    QTest::mouseDClick(&f.w, Qt::LeftButton, {}, {f.x(2000), f.laneMid(2)});
    EXPECT_EQ(f.w.viewRange(), (ViewRange{600, 5400}));
    EXPECT_EQ(f.w.selectedEvent(), f.model->findKernel(0, 0));
    EXPECT_FALSE(f.w.selection());  // clicking an event replaced the range selection
    QTest::keyClick(&f.w, Qt::Key_Home);
    QTest::keyClick(&f.w, Qt::Key_F);  // F now fits the clicked event too
    EXPECT_EQ(f.w.viewRange(), (ViewRange{600, 5400}));
}

TEST(TimelineWidget, ShiftDragPans) {
    Fixture f;
    f.w.setViewRange({0, 4680});  // 5 ns per pixel
    const int y = f.laneMid(2);
    const int x0 = TimelineWidget::kLabelWidth + 500;
    QTest::mousePress(&f.w, Qt::LeftButton, Qt::ShiftModifier, {x0, y});
    QTest::mouseMove(&f.w, {x0 - 100, y});
    QTest::mouseRelease(&f.w, Qt::LeftButton, Qt::ShiftModifier, {x0 - 100, y});
    EXPECT_EQ(f.w.viewRange(), (ViewRange{500, 5180}));  // dragged left 100 px = 500 ns later
    EXPECT_FALSE(f.w.selection());
}

TEST(TimelineWidget, ClickSelectsAnEventAndHeaderClickCollapses) {
    Fixture f;
    QSignalSpy spy(&f.w, &TimelineWidget::eventSelected);
    QTest::mouseClick(&f.w, Qt::LeftButton, {}, {f.x(4500), f.laneMid(3)});
    ASSERT_EQ(spy.count(), 1);
    const EventRef ref = f.w.selectedEvent();
    ASSERT_TRUE(ref.valid());
    EXPECT_EQ(ref, f.model->findKernel(0, 1));
    const int headerY = TimelineWidget::kRulerHeight + f.w.layout().groups()[0].y + 5;
    QTest::mouseClick(&f.w, Qt::LeftButton, {}, {f.x(4500), headerY});
    EXPECT_TRUE(f.model->groups()[0].collapsed);
    EXPECT_EQ(f.w.layout().lanes().size(), 1u);
}

TEST(MainWindow, FindStepsThroughHitsAndSelectionPanelUpdates) {
    MainWindow win;
    win.resize(1400, 800);
    LoadedCapture loaded;
    loaded.model = std::make_shared<TimelineModel>(guitest::smallCapture(2, 100));
    loaded.analysis = std::make_shared<Analysis>();
    loaded.path = "memory";
    win.showLoaded(loaded);
    win.find("gemm");
    EXPECT_EQ(win.findResult().count, 4u);
    EXPECT_EQ(win.currentHit(), 0);
    win.findNext(+1);
    const EventRef second = win.timeline()->selectedEvent();
    EXPECT_EQ(loaded.model->lane(second.lane).rows[0].start[second.index], 1100);
    win.findNext(-1);
    win.findNext(-1);
    EXPECT_EQ(win.currentHit(), 3);  // wraps around
    win.timeline()->setSelection({3000, 8000}, {0});
    EXPECT_TRUE(win.selectionSummary().contains("2 µs")) << win.selectionSummary().toStdString();
    EXPECT_TRUE(win.selectionSummary().contains("66.7 %")) << win.selectionSummary().toStdString();
}

TEST(MainWindow, LoadsInTheBackgroundAndReportsBadFiles) {
    MainWindow win;
    QSignalSpy failed(win.loader(), &CaptureLoader::failed);
    win.openCapture("/nonexistent/capture.sqlite");
    ASSERT_TRUE(failed.wait(10000) || failed.count() > 0);
    EXPECT_TRUE(failed.at(0).at(0).toString().contains("/nonexistent/capture.sqlite"));
}

TEST(MainWindow, OpensAFileAndFollowsItWhileItGrows) {
    QTemporaryDir dir;
    const std::string path = dir.filePath("live.sqlite").toStdString();
    osc::synth::GenericSpec spec;
    spec.kernels = 200;
    spec.streams = 2;
    osc::synth::writeGeneric(spec, path, false);
    MainWindow win;
    QSignalSpy loaded(win.loader(), &CaptureLoader::loaded);
    win.openCapture(QString::fromStdString(path));
    ASSERT_TRUE(loaded.wait(20000));
    ASSERT_NE(win.timeline()->model(), nullptr);
    EXPECT_EQ(win.timeline()->model()->capture().kernelCount(), 200u);
    // The "agent" writes more: the next refresh shows the new rows.
    spec.kernels = 500;
    osc::synth::writeGeneric(spec, path, true);
    win.setFollowing(true, 50);
    ASSERT_TRUE(loaded.wait(20000));
    EXPECT_EQ(win.timeline()->model()->capture().kernelCount(), 500u);
    // Auto-scroll: the newest activity is in view.
    EXPECT_GE(win.timeline()->viewRange().end, win.timeline()->model()->end());
    win.setFollowing(false);
}

TEST(PanelModels, StepsAndCollectivesPassTheModelTester) {
    auto model = std::make_shared<TimelineModel>(guitest::smallCapture());
    auto a = std::make_shared<Analysis>();
    DeviceAnalysis d;
    d.processIndex = 0;
    d.rank = 0;
    d.device = 0;
    StepAnalysis s;
    s.name = "ProfilerStep#1";
    s.start_ns = 1000;
    s.end_ns = 8000;
    s.metrics.compute_ns = 6000;
    s.metrics.comm_ns = 3000;
    s.metrics.overlap_ns = 2000;
    s.metrics.exposed_comm_ns = 1000;
    s.metrics.overlap_ratio = 2.0 / 3.0;
    s.bottleneck.collective = 1;
    d.steps.push_back(s);
    CollectiveInstance c;
    c.name = guitest::kAllReduce;
    c.collective = "AllReduce";
    c.start_ns = 4000;
    c.end_ns = 7000;
    c.duration_ns = 3000;
    d.collectives.push_back(c);
    c.start_ns = 7500;
    c.end_ns = 7900;
    c.duration_ns = 400;
    c.exposed_ns = 400;
    d.collectives.push_back(c);
    a->devices.push_back(d);

    StepTableModel steps;
    QAbstractItemModelTester t1(&steps, QAbstractItemModelTester::FailureReportingMode::Fatal);
    steps.setData(model, a);
    ASSERT_EQ(steps.rowCount(), 1);
    EXPECT_EQ(steps.index(0, StepTableModel::OverlapRatio).data().toString(), "66.7 %");
    EXPECT_EQ(steps.index(0, StepTableModel::Exposed).data().toString(), "1.00 µs");
    EXPECT_EQ(steps.index(0, 0).data(GroupRole).toInt(), 0);
    EXPECT_EQ(steps.index(0, 0).data(StartRole).toLongLong(), 1000);

    CollectiveTableModel colls;
    QAbstractItemModelTester t2(&colls, QAbstractItemModelTester::FailureReportingMode::Fatal);
    colls.setData(model, a);
    ASSERT_EQ(colls.rowCount(), 2);
    EXPECT_FALSE(colls.isBottleneck(0));
    EXPECT_TRUE(colls.isBottleneck(1));
    EXPECT_EQ(colls.index(1, CollectiveTableModel::Exposed).data().toString(), "400 ns");
    // Outside every step: said in words, never "step -1".
    EXPECT_EQ(colls.index(0, CollectiveTableModel::Step).data().toString(), "outside steps");
    EXPECT_EQ(colls.index(0, CollectiveTableModel::Bytes).data().toString(), "–");
}

TEST(TimelineWidget, OpensOnTheStepsAndBracketsGoFromStepToStep) {
    // Issue 30 item 7: a long setup phase must not push the steps aside. The
    // capture runs over [0, 9000); its steps are [4000, 5000) and [6000, 7000).
    auto model = std::make_shared<TimelineModel>(guitest::smallCapture());
    auto a = std::make_shared<Analysis>();
    DeviceAnalysis d;
    for (const auto& [s0, s1] : {std::pair<TimeNs, TimeNs>{4000, 5000}, {6000, 7000}}) {
        StepAnalysis s;
        s.name = "ProfilerStep#" + std::to_string(s0);
        s.start_ns = s0;
        s.end_ns = s1;
        d.steps.push_back(s);
    }
    a->devices.push_back(d);
    TimelineWidget w;
    w.resize(TimelineWidget::kLabelWidth + kEventWidth, 400);
    w.setModel(model, a);
    // Both steps with 2% (60 ns) of their 3 us on each side.
    EXPECT_EQ(w.viewRange(), (ViewRange{3940, 7060}));
    QTest::keyClick(&w, Qt::Key_BracketLeft);  // centre 5500, between: the step before
    EXPECT_EQ(w.viewRange(), (ViewRange{3980, 5020}));
    QTest::keyClick(&w, Qt::Key_BracketLeft);  // none before the first
    EXPECT_EQ(w.viewRange(), (ViewRange{3980, 5020}));
    QTest::keyClick(&w, Qt::Key_BracketRight);
    EXPECT_EQ(w.viewRange(), (ViewRange{5980, 7020}));
    QTest::keyClick(&w, Qt::Key_Home);  // Fit all still shows everything
    EXPECT_EQ(w.viewRange(), (ViewRange{-180, 9180}));
    // M pins a marker at the view's middle when the mouse is not over it.
    QTest::keyClick(&w, Qt::Key_M);
    EXPECT_EQ(w.markers().times(), (std::vector<TimeNs>{4500}));
}

TEST(TimelineWidget, ADragOnTheRulerMeasuresOnEveryDevice) {
    // Issue 30 item 6: a drag from the ruler selected "0 device(s)".
    auto model = std::make_shared<TimelineModel>(guitest::smallCapture(3, 100));
    TimelineWidget w;
    w.resize(TimelineWidget::kLabelWidth + kEventWidth, 400);
    w.setModel(model);
    const ViewRange v = w.viewRange();
    const auto x = [&](TimeNs t) {
        return TimelineWidget::kLabelWidth + static_cast<int>((t - v.start) * kEventWidth / v.length());
    };
    const int y = TimelineWidget::kRulerHeight / 2;
    QTest::mousePress(&w, Qt::LeftButton, {}, {x(2000), y});
    QTest::mouseMove(&w, {x(6000), y});
    QTest::mouseRelease(&w, Qt::LeftButton, {}, {x(6000), y});
    ASSERT_TRUE(w.selection());
    EXPECT_NEAR(static_cast<double>(w.selection()->start), 2000, 2 * v.length() / kEventWidth);
    EXPECT_NEAR(static_cast<double>(w.selection()->end), 6000, 2 * v.length() / kEventWidth);
    // Three ranks, one device each: three device groups, whatever the mouse crossed.
    ASSERT_EQ(w.selectionGroups().size(), 3u);
    std::set<int> ranks;
    for (int g : w.selectionGroups()) {
        ASSERT_GE(model->groups()[static_cast<size_t>(g)].device, 0);
        ranks.insert(model->processOf(g).rank);
    }
    EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
    // A double-click on the ruler pins a marker there.
    QTest::mouseDClick(&w, Qt::LeftButton, {}, {x(4000), y});
    ASSERT_EQ(w.markers().times().size(), 1u);
    EXPECT_NEAR(static_cast<double>(w.markers().times()[0]), 4000, 2 * v.length() / kEventWidth);
}

TEST(MainWindow, ALayoutComesBackWhenTheFileOpensAgain) {
    // Issue 30 item 7: collapsed groups and hidden lanes are kept per file.
    QTemporaryDir dir;
    const auto open = [&](MainWindow& win, const QString& name) {
        LoadedCapture l;
        l.model = std::make_shared<TimelineModel>(guitest::smallCapture(2, 100));
        l.analysis = std::make_shared<Analysis>();
        l.path = dir.filePath(name);
        win.showLoaded(l);
        return l.model;
    };
    int hidden = -1;
    {
        MainWindow win;
        const auto a = open(win, "a.sqlite");
        a->setCollapsed(1, true);
        hidden = a->groups()[0].lanes[1];
        a->setHidden(hidden, true);
        open(win, "b.sqlite");  // a's layout is saved as b opens
    }
    MainWindow win;
    const auto b = open(win, "b.sqlite");
    EXPECT_FALSE(b->groups()[1].collapsed);  // b was never changed
    const auto a = open(win, "a.sqlite");
    EXPECT_TRUE(a->groups()[1].collapsed);
    EXPECT_FALSE(a->groups()[0].collapsed);
    EXPECT_TRUE(a->lane(hidden).hidden);
    EXPECT_EQ(win.timeline()->layout().slotOf(hidden), nullptr);  // and the timeline shows it so
    // Back to the default: nothing is kept for it any more.
    a->setCollapsed(1, false);
    a->showAllLanes();
    open(win, "b.sqlite");
    EXPECT_FALSE(open(win, "a.sqlite")->groups()[1].collapsed);
}

TEST(TimelineWidget, AMarkerIsADashedLineWithItsNameInTheRuler) {
    Fixture f;
    f.w.addMarker(2000);
    f.w.addMarker(6000);
    const QImage img = f.grab();
    const auto markerPixels = [&](int x, int y0, int y1) {
        int n = 0;
        for (int y = y0; y < y1; ++y) n += rgbAt(img, x, y) == palette::kMarker;
        return n;
    };
    const int lanesTop = TimelineWidget::kRulerHeight, lanesBottom = img.height();
    // Dashed: on over a good part of the column, off elsewhere.
    const int on = markerPixels(f.x(2000), lanesTop, lanesBottom);
    EXPECT_GT(on, (lanesBottom - lanesTop) / 4);
    EXPECT_LT(on, lanesBottom - lanesTop);
    EXPECT_EQ(markerPixels(f.x(4000), lanesTop, lanesBottom), 0);
    // The name chip sits at the ruler's foot, right of the line.
    EXPECT_GT(markerPixels(f.x(6000) + 2, lanesTop - 11, lanesTop - 1), 5);
    EXPECT_EQ(markerPixels(f.x(4000), lanesTop - 11, lanesTop - 1), 0);
    // The chip of the marker at the 2 µs tick would cut its label ("M1|µs"):
    // that label is left out, the 3 µs one is drawn (text pixels right of its tick).
    const auto textPixels = [&](int x0, int x1) {  // above the chips
        int n = 0;
        for (int y = 0; y < lanesTop - 12; ++y)
            for (int x = x0; x < x1; ++x) n += rgbAt(img, x, y) != palette::kHeader;
        return n;
    };
    EXPECT_EQ(textPixels(f.x(2000) + 3, f.x(2000) + 40), 0);
    EXPECT_GT(textPixels(f.x(3000) + 3, f.x(3000) + 40), 10);
    if (::testing::Test::HasFailure())
        img.save(QString::fromStdString(::testing::TempDir()) + "/test_gui_widget_markers.png");
}

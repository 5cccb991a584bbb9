// The what-if panel: its plot layout (plain C++) against hand-placed points,
// and the widget on the offscreen platform, painting a synth capture's
// prediction where the layout says. Set OSC_GUI_TEST_SAVE=DIR to keep the
// rendered panel as DIR/whatif-panel.png (how docs/images/gui-whatif.png was made).
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/synth/workload_synth.h"
#include "gui/model/whatif_plot.h"
#include "gui/render/palette.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/whatif_panel.h"

#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QImage>

#include <cmath>
#include <cstdlib>

using namespace osc;
using namespace osc::gui;

namespace {

whatif::ScenarioResult scenario(double mb, double stepMs, bool best = false) {
    whatif::ScenarioResult s;
    s.bucket_mb = mb;
    s.step_ns = static_cast<TimeNs>(stepMs * 1e6);
    s.no_overlap_step_ns = s.step_ns + 1'000'000;
    s.perfect_overlap_step_ns = s.step_ns - 500'000;
    s.best = best;
    return s;
}

TEST(WhatIfPlot, BucketSizesOnALogAxisAndStepsOnALinearOne) {
    WhatIfSeries series;
    series.label = "rank 0";
    series.scenarios = {scenario(1, 10), scenario(10, 8, true), scenario(100, 12)};
    whatif::ObservedResult o;
    o.bucket_mb = 10;
    o.step_ns = 9'000'000;
    series.observed = o;
    const WhatIfPlot p = layoutWhatIfPlot(series, 600, 300);
    ASSERT_EQ(p.step.size(), 3u);
    // 1, 10, 100 MiB: equal steps in log2, from the left edge to the right one.
    EXPECT_DOUBLE_EQ(p.step[0].x, p.left);
    EXPECT_DOUBLE_EQ(p.step[2].x, p.right);
    EXPECT_NEAR(p.step[1].x, (p.left + p.right) / 2, 1e-9);
    // Longer steps are higher up (smaller y): 12 ms above 10 ms above 8 ms.
    EXPECT_LT(p.step[2].y, p.step[0].y);
    EXPECT_LT(p.step[0].y, p.step[1].y);
    for (const auto& pts : {p.step, p.noOverlap, p.perfect})
        for (const auto& pt : pts) {
            EXPECT_GE(pt.y, p.top - 1e-9);
            EXPECT_LE(pt.y, p.bottom + 1e-9);
        }
    EXPECT_EQ(p.best, 1);
    ASSERT_TRUE(p.observed.has_value());
    EXPECT_NEAR(p.observed->x, p.step[1].x, 1e-9);
    EXPECT_GT(p.observed->y, p.step[0].y);  // 9 ms: between 10 and 8
    EXPECT_LT(p.observed->y, p.step[1].y);
    EXPECT_EQ(p.xTicks[2].label, "100");
    EXPECT_NE(p.caption.find("best 10 MiB: 8.000 ms"), std::string::npos) << p.caption;
}

TEST(WhatIfPlot, SeriesIsTheMedianWithSeveralDevices) {
    whatif::WhatIfResult r;
    std::string why;
    EXPECT_FALSE(whatIfSeries(r, &why).has_value());
    EXPECT_NE(why.find("no GPU activity"), std::string::npos);
    whatif::DeviceWhatIf a, b;
    a.modelled = b.modelled = true;
    a.label = "rank 0";
    a.scenarios = {scenario(25, 5)};
    b.scenarios = {scenario(25, 7)};
    r.devices = {a};
    EXPECT_EQ(whatIfSeries(r)->label, "rank 0");
    r.devices = {a, b};
    r.summary = {scenario(25, 6)};
    const auto s = whatIfSeries(r);
    EXPECT_EQ(s->label, "median over 2 devices");
    EXPECT_EQ(s->scenarios[0].step_ns, 6'000'000);
}

TEST(WhatIfPanelWidget, PaintsThePredictionOfTheLoadedCapture) {
    synth::WorkloadSpec spec;
    spec.layers = 10;
    spec.steps = 3;
    spec.optimizerNs = 200'000;
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(spec));
    auto model = std::make_shared<TimelineModel>(capture);
    auto analysis = std::make_shared<const Analysis>(analyze(*capture));

    WhatIfPanel panel;
    panel.resize(640, 320);
    panel.setData(model, analysis);
    EXPECT_FALSE(panel.result().has_value());  // not shown yet: nothing computed
    panel.compute();
    ASSERT_TRUE(panel.result().has_value());
    const auto series = whatIfSeries(*panel.result());
    ASSERT_TRUE(series.has_value()) << panel.message().toStdString();
    EXPECT_EQ(series->scenarios.size(), WhatIfPanel::bucketSizes().size());

    QImage img(panel.size(), QImage::Format_ARGB32);
    panel.render(&img);
    const WhatIfPlot plot = layoutWhatIfPlot(*series, panel.width(), panel.height());
    const auto colourAt = [&](double x, double y) {
        return img.pixel(static_cast<int>(std::lround(x)), static_cast<int>(std::lround(y))) & 0xFFFFFF;
    };
    // Each predicted point is a dot of the communication colour (the best one
    // is drawn over in the highlight colour, the observed one ringed).
    for (size_t i = 0; i < plot.step.size(); ++i) {
        const uint32_t c = colourAt(plot.step[i].x, plot.step[i].y);
        const bool ringed =
            plot.observed && std::hypot(plot.observed->x - plot.step[i].x, plot.observed->y - plot.step[i].y) <= 9;
        if (static_cast<int>(i) == plot.best) {
            EXPECT_EQ(c, palette::kHighlight) << i;
        } else if (!ringed) {
            EXPECT_EQ(c, palette::kCommunication) << i;
        }
    }
    // Away from the plot: background.
    EXPECT_EQ(colourAt(panel.width() - 2, 2), palette::kBackground);
    if (const char* dir = std::getenv("OSC_GUI_TEST_SAVE")) img.save(QString(dir) + "/whatif-panel.png");
    if (::testing::Test::HasFailure()) img.save(QDir::tempPath() + "/test_gui_whatif_failure.png");
}

TEST(WhatIfPanelWidget, TheViewMenuShowsItForTheLoadedCapture) {
    synth::WorkloadSpec spec;
    spec.layers = 10;
    spec.steps = 3;
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(spec));
    LoadedCapture loaded;
    loaded.model = std::make_shared<TimelineModel>(capture);
    loaded.analysis = std::make_shared<const Analysis>(analyze(*capture));
    loaded.path = "synth.sqlite";
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.showLoaded(loaded);
    auto* panel = window.findChild<WhatIfPanel*>();
    ASSERT_NE(panel, nullptr);
    EXPECT_FALSE(panel->isVisible());
    EXPECT_FALSE(panel->result().has_value());  // hidden: not computed
    QAction* show = nullptr;
    for (QAction* a : window.findChildren<QAction*>())
        if (a->text().contains("What-if")) show = a;
    ASSERT_NE(show, nullptr);
    show->trigger();
    QApplication::processEvents();
    EXPECT_TRUE(panel->isVisible());
    // Computed on a worker: the window goes on meanwhile.
    panel->waitForResult();
    ASSERT_TRUE(panel->result().has_value());
    EXPECT_TRUE(panel->result()->devices[0].modelled);
    if (const char* dir = std::getenv("OSC_GUI_TEST_SAVE")) window.grab().save(QString(dir) + "/whatif-window.png");
}

TEST(WhatIfPanelWidget, RefusesATensorParallelCaptureAsTheCommandDoes) {
    // examples/h100/tp_pipelined: reduce-scatters inside the forward pass.
    // The panel says what `overlapscope whatif` says, and names no best size.
    auto capture = std::make_shared<Capture>(loadCapture(OSC_TEST_EXAMPLES "/h100/tp_pipelined"));
    auto model = std::make_shared<TimelineModel>(capture);
    auto analysis = std::make_shared<const Analysis>(analyze(*capture));
    WhatIfPanel panel;
    panel.resize(640, 320);
    panel.setData(model, analysis);
    panel.compute();
    ASSERT_TRUE(panel.result().has_value());
    const auto misfit = whatif::modelMisfit(*panel.result());
    ASSERT_TRUE(misfit.has_value());
    EXPECT_FALSE(whatIfSeries(*panel.result()).has_value());
    EXPECT_TRUE(panel.message().contains(QString::fromStdString(*misfit))) << panel.message().toStdString();
    EXPECT_TRUE(panel.message().contains("refuses it too")) << panel.message().toStdString();
    EXPECT_FALSE(panel.message().contains("best")) << panel.message().toStdString();
    QImage img(panel.size(), QImage::Format_ARGB32);
    panel.render(&img);
    // No plot: nothing in the communication colour of the prediction line.
    for (int y = 0; y < img.height(); y += 2)
        for (int x = 0; x < img.width(); x += 2)
            ASSERT_NE(img.pixel(x, y) & 0xFFFFFF, palette::kCommunication) << x << "," << y;
}

TEST(WhatIfPanelWidget, AxesHaveTitlesWithUnits) {
    WhatIfSeries series;
    series.label = "rank 0";
    series.scenarios = {scenario(1, 10), scenario(10, 8, true), scenario(100, 12)};
    const WhatIfPlot p = layoutWhatIfPlot(series, 600, 300);
    EXPECT_NE(p.xTitle.find("MiB"), std::string::npos);
    EXPECT_NE(p.yTitle.find("ms"), std::string::npos);
    // Below the x tick labels, above the caption; left of the y tick labels.
    EXPECT_GT(p.xTitleAt.y, p.bottom + 16);
    EXPECT_LT(p.xTitleAt.y, 300 - 14);
    EXPECT_LT(p.yTitleAt.x, p.left - 30);
    whatif::WhatIfResult r;
    whatif::DeviceWhatIf d;
    d.modelled = true;
    d.label = "rank 0";
    d.scenarios = series.scenarios;
    d.self_check_error = 0.07;
    r.devices = {d};
    // A self-check between 5 and 10%: plotted, with the CLI's warning in words.
    const auto warned = whatIfSeries(r);
    ASSERT_TRUE(warned.has_value());
    EXPECT_NE(layoutWhatIfPlot(*warned, 600, 300).caption.find("treat the predictions with care"), std::string::npos);
}

TEST(WhatIfPanelWidget, SaysWhyWhenNothingIsModelled) {
    auto capture = std::make_shared<Capture>();
    auto model = std::make_shared<TimelineModel>(capture);
    WhatIfPanel panel;
    panel.setData(model, std::make_shared<const Analysis>(analyze(*capture)));
    panel.compute();
    EXPECT_TRUE(panel.message().startsWith("Not modelled")) << panel.message().toStdString();
}

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

// The small things of issue 40 item 7, each against a hand-worked answer:
// counts with their thousands grouped, "0 µs" rather than "0.00000 µs",
// kernel tooltips that say where and how a kernel ran, the what-if fit
// quality, "1 process", no stale "hit N of M" after Find closes, a progress
// bar that only moves forward, the layout saved as it changes (before the
// window closes), and the dark theme following the palette.
#include "gui/model/column_units.h"
#include "gui/model/event_tooltip.h"
#include "gui/model/time_ticks.h"
#include "gui/model/whatif_plot.h"
#include "gui/render/palette.h"
#include "gui/widgets/capture_loader.h"
#include "gui/widgets/dark_theme.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/timeline_widget.h"
#include "gui/widgets/wrapping_delegate.h"
#include "tests/gui/analysed_capture.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>
#include <QApplication>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QSettings>
#include <QTableWidget>
#include <QTest>
#include <QToolBar>

using namespace osc;
using namespace osc::gui;

TEST(Polish, CountsGroupTheirThousands) {
    EXPECT_EQ(formatCount(0), "0");
    EXPECT_EQ(formatCount(999), "999");
    EXPECT_EQ(formatCount(1000), "1,000");
    EXPECT_EQ(formatCount(1234567), "1,234,567");
    EXPECT_EQ(formatCount(100000000000ull), "100,000,000,000");
}

TEST(Polish, NothingAtAllIsZeroNotZeroesRoundedAway) {
    // A column of durations from 1.21 µs to 40 ms keeps 5 decimals of ms for the small one...
    const ColumnUnit unit = columnUnit(40'210'000, 1'210);
    EXPECT_EQ(formatInUnit(1'210, unit), "0.00121 ms");
    // ...and a zero in it is a plain zero.
    EXPECT_EQ(formatInUnit(0, unit), "0 ms");
    EXPECT_EQ(formatInUnit(0, columnUnit(500'000, 10)), "0 µs");
}

// smallCapture: gemm_kernel [1000, 5000) on stream 7, the all-reduce [4000,
// 7000) on stream 13, a 4,096-byte HtoD copy [500, 900) on stream 20; here
// the first GEMM is launched by cudaLaunchKernel at 800 ns (correlation 42).
TEST(Polish, KernelTooltipsSayWhereAndHowTheKernelRan) {
    auto c = guitest::smallCapture();
    Process& p = c->processes[0];
    p.devices[0].kernels.correlation[0] = 42;
    guitest::addApiCall(*c, p, 800, 950, 7, "cudaLaunchKernel", 42);
    c->finalize();
    const LoadedCapture l = guitest::analysed(c);
    const TimelineModel& m = *l.model;
    const auto onStream = [&](uint32_t stream, TimeNs start, EventSource source) {
        return m.findOnStream(0, stream, start, source);
    };
    const std::string gemm = eventTooltip(m, l.analysis.get(), onStream(7, 1000, EventSource::Kernel));
    EXPECT_EQ(gemm,
              "gemm_kernel · 4 µs\nstream 7 · grid 1×1×1 · block 1×1×1\ncorrelation 42 · launched by cudaLaunchKernel "
              "at " +
                  formatTimestamp(800) + " (thread 7)")
        << gemm;
    const std::string nccl = eventTooltip(m, l.analysis.get(), onStream(13, 4000, EventSource::Kernel));
    EXPECT_NE(nccl.find("stream 13 · grid 1×1×1"), std::string::npos) << nccl;
    EXPECT_NE(nccl.find("\nAllReduce"), std::string::npos) << nccl;
    const std::string copy = eventTooltip(m, l.analysis.get(), onStream(20, 500, EventSource::Copy));
    // 4,096 bytes in 400 ns: 10.24 GB/s.
    EXPECT_NE(copy.find("stream 20 · 4 KiB · 10.24 GB/s"), std::string::npos) << copy;
}

// The window reads a launch's grid and block (its tooltip and details show
// them) and leaves registers, shared memory and graph ids unread, as the
// CLI's jobs do: 20 bytes a kernel at 1,024 ranks. The file's every
// AllReduce launch is 2x1x1 blocks of 288 threads (sqlite3 on the file).
TEST(Polish, TheWindowReadsALaunchsGridAndBlockOnly) {
    const LoadedCapture l = loadForViewing(OSC_TEST_EXAMPLES "/h100/ddp_bucketed/vm-655-rank0.sqlite", {}, nullptr, {});
    const Capture& c = l.model->capture();
    const KernelTable& k = c.processes.at(0).devices.at(0).kernels;
    ASSERT_GT(k.size(), 0u);
    EXPECT_EQ(k.gridX.size(), k.size());
    EXPECT_EQ(k.blockZ.size(), k.size());
    EXPECT_TRUE(k.registersPerThread.empty());
    EXPECT_TRUE(k.graphNodeId.empty());
    int allReduces = 0;
    for (size_t i = 0; i < k.size(); ++i) {
        if (c.strings.at(k.name[i]).rfind("ncclDevKernel_AllReduce", 0) != 0) continue;
        ++allReduces;
        const std::string tip = eventTooltip(*l.model, l.analysis.get(),
                                             l.model->findOnStream(0, k.stream[i], k.start[i], EventSource::Kernel));
        EXPECT_NE(tip.find("grid 2×1×1 · block 288×1×1"), std::string::npos) << tip;
    }
    EXPECT_EQ(allReduces, 39);
}

TEST(Polish, WhatIfShowsTheFitQualityTheCommandPrints) {
    whatif::WhatIfResult r;
    whatif::DeviceWhatIf d;
    d.label = "rank 0";
    d.modelled = true;
    d.collective = "AllReduce";
    d.fit.alpha_ns = 20'000;
    d.fit.ns_per_byte = 0.04;
    d.fit.samples = 6;
    d.fit.distinctSizes = 2;
    d.fit.r2 = 0.9984;
    whatif::ScenarioResult s;
    s.bucket_mb = 25;
    s.step_ns = 3'000'000;
    d.scenarios = {s};
    r.devices = {d};
    auto series = whatIfSeries(r);
    ASSERT_TRUE(series);
    EXPECT_EQ(series->fit,
              "cost fit: 20.0 µs + 0.0400 ns/byte (25.0 GB/s) per AllReduce, from 6 samples of 2 sizes, r² 0.998");
    EXPECT_EQ(layoutWhatIfPlot(*series, 600, 300).fit, series->fit);
    r.devices[0].fit.alphaSource = "zero";
    EXPECT_TRUE(whatIfSeries(r)->fit.ends_with("; the fitted alpha was negative: refitted through zero"));
    // Several devices: the range of their r².
    r.devices.push_back(r.devices[0]);
    r.devices[1].fit.r2 = 0.95;
    r.devices[1].fit.alphaSource = "fit";
    r.summary = {s};
    EXPECT_EQ(whatIfSeries(r)->fit,
              "cost fits of 2 devices: r² 0.950 to 0.998; 1 refitted through zero (negative alpha)");
}

TEST(PolishWindow, OneProcessAndFindLeavesNoStaleHit) {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    w.showLoaded(guitest::analysed(guitest::smallCapture(), "/polish/one"));
    EXPECT_TRUE(w.statusText().contains(": 1 process, 3 kernels")) << w.statusText().toStdString();
    const QString before = w.statusText();
    auto* bar = w.findChild<QToolBar*>("find");
    ASSERT_TRUE(bar);
    bar->show();
    w.find("gemm");
    EXPECT_EQ(w.statusText(), "hit 1 of 2");
    w.findNext(+1);
    EXPECT_EQ(w.statusText(), "hit 2 of 2");
    bar->hide();  // View > Panels > Find bar, or Esc in its box
    EXPECT_EQ(w.statusText(), before);
    EXPECT_TRUE(w.findLabelText().isEmpty());
}

TEST(PolishWindow, TheProgressBarOnlyMovesForward) {
    MainWindow w;
    w.openCapture("/polish/does-not-exist.sqlite");  // a load is running: the bar listens
    auto* bar = w.findChild<QProgressBar*>();
    ASSERT_TRUE(bar);
    emit w.loader()->progress(0.6, "reading");
    emit w.loader()->progress(0.3, "analysing");  // a later stage counting from its own start
    EXPECT_EQ(bar->value(), 600);
    emit w.loader()->progress(0.9, "analysing");
    EXPECT_EQ(bar->value(), 900);
    w.loader()->waitForIdle();
}

TEST(PolishWindow, TheLayoutIsSavedAsItChanges) {
    const QString path = "/polish/layout-" + QString::number(QCoreApplication::applicationPid());
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    w.showLoaded(guitest::analysed(guitest::smallCapture(2), path));
    QTest::qWait(400);
    w.timeline()->model()->setCollapsed(1, true);
    w.timeline()->relayout();
    // Within a moment, on disk, with the window still open (a kill keeps it).
    const QString file = QSettings().fileName();
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            QFile f(file);
            if (!f.open(QIODevice::ReadOnly)) return false;
            const QString text = QString::fromUtf8(f.readAll());
            return text.contains("collapsed") && text.contains("layouts");
        }(),
        5000);
}

TEST(PolishWindow, TheDarkThemeFollowsThePalette) {
    // darkVariant: lightness inverted into [0.08, 0.92], the hue kept.
    EXPECT_LT(QColor(darkVariant(0xFFFFFFFF)).lightnessF(), 0.1);
    // The text colour 0x20252B: lightness (0x2B + 0x20) / 2 / 255 = 0.147, so 0.08 + 0.84 x 0.853 = 0.797.
    EXPECT_NEAR(QColor(darkVariant(0xFF20252B)).lightnessF(), 0.08 + 0.84 * (1 - (0x2B + 0x20) / 2.0 / 255), 0.005);
    const QColor compute(darkVariant(0xFF000000u | palette::kCompute));
    EXPECT_NEAR(compute.hslHueF(), QColor::fromRgb(0xFF000000u | palette::kCompute).hslHueF(), 0.01);

    const QPalette light = QApplication::palette();
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    w.showLoaded(guitest::analysed(guitest::smallCapture(), "/polish/dark"));
    QApplication::processEvents();
    const auto background = [&w] {
        const QImage img = w.timeline()->grab().toImage();
        return QColor(img.pixel(img.width() - 3, img.height() - 3));
    };
    EXPECT_GT(background().lightnessF(), 0.9);
    QPalette dark = light;
    dark.setColor(QPalette::Window, QColor(0x20, 0x20, 0x20));
    dark.setColor(QPalette::Base, QColor(0x18, 0x18, 0x18));
    dark.setColor(QPalette::WindowText, Qt::white);
    QApplication::setPalette(dark);
    QApplication::processEvents();
    EXPECT_LT(background().lightnessF(), 0.1);
    QApplication::setPalette(light);
    QApplication::processEvents();
    EXPECT_GT(background().lightnessF(), 0.9);
}

// A wrapped Details value: every line drawn inside its row. A name of 400
// 'W's breaks anywhere, so its lines are known without the delegate: as
// many 'W's per line as fit the cell's text width. (Drawn by
// QPainter::drawText, the lines were spaced by the font's leading too, so a
// long name outgrew the row measured without it and lost its last lines.)
TEST(PolishWindow, WrappedDetailsLinesAllShow) {
    QTableWidget table(1, 1);
    table.setWordWrap(true);
    table.horizontalHeader()->hide();
    table.verticalHeader()->hide();
    table.setShowGrid(false);
    table.setColumnWidth(0, 200);
    table.setItemDelegateForColumn(0, new WrappingDelegate(&table));
    table.setItem(0, 0, new QTableWidgetItem(QString(400, 'W')));
    table.resize(240, 900);
    table.show();
    table.resizeRowsToContents();
    QApplication::processEvents();
    const QFontMetrics fm(table.font());
    const int perLine = (200 - 2 * WrappingDelegate::kMargin) / fm.horizontalAdvance('W');
    const int lines = (400 + perLine - 1) / perLine;
    ASSERT_GE(lines, 12);
    RecordProperty("leading", fm.leading());
    // Bands of rows with ink inside the cell: one per line drawn, none cut at the cell's edges.
    const QImage img = table.viewport()->grab().toImage();
    const QRect cell = table.visualRect(table.model()->index(0, 0));
    const QRgb background = img.pixel(cell.right() - 1, cell.top() + 1);
    int bands = 0;
    bool inInk = false, inkAtEdge = false;
    for (int y = cell.top(); y <= cell.bottom(); ++y) {
        bool ink = false;
        for (int x = cell.left(); x <= cell.right() && !ink; ++x) ink = qGray(img.pixel(x, y)) < qGray(background) - 80;
        if (ink && (y == cell.top() || y == cell.bottom())) inkAtEdge = true;
        if (ink && !inInk) ++bands;
        inInk = ink;
    }
    EXPECT_EQ(bands, lines);
    EXPECT_FALSE(inkAtEdge);
}

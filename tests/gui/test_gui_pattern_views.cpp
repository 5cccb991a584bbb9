// The Steps table's bubble and all-to-all imbalance columns and the step
// details (issue 18), in the analyzer's numbers; and the pixels of bubbles
// and send -> receive arrows, offscreen.
#include "analyzer/synth/pattern_synth.h"
#include "gui/model/step_patterns.h"
#include "gui/render/palette.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/pattern_test_support.h"

#include <gtest/gtest.h>
#include <QApplication>
#include <QImage>

#include <cmath>

using namespace osc;
using namespace osc::gui;
using namespace osc::guitest;

// ---- the Steps table and step details ----

TEST(StepColumns, PipelineBubbleShareAgainstTheTheory) {
    synth::PipelineSpec spec;
    spec.slowStage = 3;
    spec.slowFactor = 2;
    const Loaded l = load(synth::synthesizePipeline(spec));
    StepTableModel steps;
    steps.setData(l.model, l.analysis);
    steps.waitForSort();
    EXPECT_TRUE(steps.hasPipeline());
    EXPECT_FALSE(steps.hasAllToAll());
    ASSERT_EQ(steps.rowCount(), 4 * spec.steps);
    // README: window M(t_f'+t_b') + (S−1)(t_f+t_b) = 24 + 4.5 = 28.5 ms; the
    // slow stage idles 4.5 ms (15.8 %), every other 28.5 − 12 = 16.5 ms (57.9 %).
    for (int row = 0; row < steps.rowCount(); ++row) {
        const QString device = steps.index(row, StepTableModel::Device).data().toString();
        const QString cell = steps.index(row, StepTableModel::Bubble).data().toString();
        EXPECT_EQ(cell, device.startsWith("rank 3") ? "15.8 % (27.3 %)" : "57.9 % (27.3 %)") << device.toStdString();
        EXPECT_EQ(steps.index(row, StepTableModel::AllToAllImbalance).data().toString(), "–");
        EXPECT_TRUE(steps.index(row, StepTableModel::Bubble).data(Qt::ToolTipRole).toString().contains("fill"));
    }
    // Details of a step: the same numbers in words.
    const EventRef step = l.model->findStep(groupOfRank(l, 0), l.analysis->devices[0].steps[0].start_ns);
    const DetailList d = eventDetails(*l.model, step, l.analysis.get());
    EXPECT_NE(valueOf(d, "pipeline bubble").find("= 57.9 %; theory (S−1)/(M+S−1) = 3/11 = 27.3 %"), std::string::npos)
        << valueOf(d, "pipeline bubble");
    EXPECT_EQ(valueOf(d, "pipeline stage"), "stage 0 of 4, 8 micro-batches");
}

TEST(StepColumns, AllToAllImbalanceFlagsTheOverloadedRank) {
    for (const double f : {3.0, 1.0}) {
        synth::AllToAllSpec spec;
        spec.imbalance = f;
        spec.hotRank = 2;
        const Loaded l = load(synth::synthesizeAllToAll(spec));
        StepTableModel steps;
        steps.setData(l.model, l.analysis);
        steps.waitForSort();
        EXPECT_FALSE(steps.hasPipeline());
        EXPECT_TRUE(steps.hasAllToAll());
        // README: bytes imbalance R(1+F) / (2(R−1+F)): 4/3 with F = 3 (a
        // finding from 1.25, on the hot rank), exactly 1 with F = 1.
        const QString value = f == 3.0 ? "1.33× bytes" : "1.00× bytes";
        for (int row = 0; row < steps.rowCount(); ++row) {
            const bool hot = steps.index(row, StepTableModel::Device).data().toString().startsWith("rank 2");
            const QString cell = steps.index(row, StepTableModel::AllToAllImbalance).data().toString();
            EXPECT_EQ(cell, (hot && f == 3.0 ? "⚑ " : "") + value) << row;
            EXPECT_EQ(steps.index(row, StepTableModel::Bubble).data().toString(), "–");
        }
        const EventRef step = l.model->findStep(groupOfRank(l, 0), l.analysis->devices[0].steps[1].start_ns);
        const DetailList d = eventDetails(*l.model, step, l.analysis.get());
        EXPECT_NE(valueOf(d, "all-to-all imbalance").find(f == 3.0 ? "most: rank 2 · GPU 2" : "balanced"),
                  std::string::npos)
            << valueOf(d, "all-to-all imbalance");
        EXPECT_NE(valueOf(d, "all-to-all").find("2 operation(s)"), std::string::npos) << valueOf(d, "all-to-all");
    }
}

namespace {

// Three ranks, two steps that are all named `train` (a custom step
// pattern). In the first, only rank 0 runs an exchange, on a communicator
// no other rank has: it matches nothing, so the analyzer files no all-to-all
// step for it. In the second, all three exchange; everyone sends 4 MiB to
// rank 2 and 1 MiB otherwise: bytes sent and received 7, 7 and 10 MiB,
// mean 8, imbalance 10/8 = 1.25 (at the finding threshold, on rank 2).
Capture repeatedStepNames() {
    osc::testing::TraceBuilder b;
    for (int step = 0; step < 2; ++step)
        for (int r = 0; r < 3; ++r) {
            const TimeNs cpu = 100 * step, t0 = us(100 * step);
            b.range(r, "train", cpu, cpu + 50);
            b.launched(r, 0, kGemm, cpu + 1, t0, t0 + us(10));
            if (step == 0 && r != 0) continue;
            b.launched(r, 0, kSendRecv, cpu + 2, t0 + us(10), t0 + us(40), 13);
            const uint64_t comm = step == 0 ? 0xdead : 0xc0ffee;
            for (int peer : {(r + 1) % 3, (r + 2) % 3}) {
                b.p2pRow(r, 0, comm, "Send", peer, 3, peer == 2 ? 4 * MiB : MiB, t0 + us(10), t0 + us(40));
                b.p2pRow(r, 0, comm, "Recv", peer, 3, r == 2 ? 4 * MiB : MiB, t0 + us(10), t0 + us(40));
            }
        }
    return b.finalized();
}

}  // namespace

TEST(StepColumns, AllToAllImbalanceIsFoundByStepKeyNotByName) {
    AnalysisSettings settings;
    settings.stepPattern = "^train$";
    const Loaded l = load(repeatedStepNames(), settings);
    ASSERT_EQ(l.analysis->alltoall.size(), 1u);
    EXPECT_DOUBLE_EQ(*l.analysis->alltoall[0].bytes_imbalance, 1.25);
    EXPECT_EQ(l.analysis->alltoall[0].step, "train");
    EXPECT_EQ(l.analysis->alltoall[0].occurrence, 1);  // the second `train`
    const auto index = allToAllStepIndex(*l.analysis);
    for (int rank = 0; rank < 3; ++rank) {
        const size_t d = static_cast<size_t>(groupOf(l, rank).analysisDevice);
        ASSERT_EQ(l.analysis->devices[d].steps.size(), 2u);
        EXPECT_EQ(index[d][0], -1) << "rank " << rank;
        EXPECT_EQ(index[d][1], 0) << "rank " << rank;
    }
    // Rank 0 ran all-to-all in its first step, but nothing to compare with.
    const size_t d0 = static_cast<size_t>(groupOf(l, 0).analysisDevice);
    EXPECT_TRUE(l.analysis->devices[d0].steps[0].alltoall.has_value());

    StepTableModel steps;
    steps.setData(l.model, l.analysis);
    steps.waitForSort();
    EXPECT_TRUE(steps.hasAllToAll());
    ASSERT_EQ(steps.rowCount(), 6);
    int flagged = 0, plain = 0, none = 0;
    for (int row = 0; row < steps.rowCount(); ++row) {
        const QString device = steps.index(row, StepTableModel::Device).data().toString();
        const QString start = steps.index(row, StepTableModel::Start).data().toString();
        const QString cell = steps.index(row, StepTableModel::AllToAllImbalance).data().toString();
        const bool second = steps.index(row, StepTableModel::Start).data(StartRole).toLongLong() >= us(100);
        if (!second) {
            EXPECT_EQ(cell, "–") << device.toStdString() << " " << start.toStdString();
            ++none;
        } else if (device.startsWith("rank 2")) {
            EXPECT_EQ(cell, "⚑ 1.25× bytes");
            ++flagged;
        } else {
            EXPECT_EQ(cell, "1.25× bytes") << device.toStdString();
            ++plain;
        }
    }
    EXPECT_EQ(none, 3);
    EXPECT_EQ(flagged, 1);
    EXPECT_EQ(plain, 2);
    // The first step's details: its all-to-all, but no imbalance.
    const EventRef first = l.model->findStep(groupOfRank(l, 0), l.analysis->devices[d0].steps[0].start_ns);
    const DetailList d = eventDetails(*l.model, first, l.analysis.get());
    EXPECT_NE(valueOf(d, "all-to-all").find("1 operation(s)"), std::string::npos) << valueOf(d, "all-to-all");
    EXPECT_EQ(valueOf(d, "all-to-all imbalance"), "<none>");
}

// ---- pixels ----

namespace {

// The whole capture in view (CPU lanes hidden); x(t) is the column of time t.
struct Window {
    Loaded l;
    TimelineWidget w;
    static constexpr int kWidth = 1500;
    explicit Window(Capture c) : l(load(std::move(c))) {
        w.resize(TimelineWidget::kLabelWidth + kWidth, 900);
        w.setModel(l.model, l.analysis);
        w.model()->setHostLanesShown(false);
        w.relayout();
    }
    int x(TimeNs t) const { return static_cast<int>(std::lround(w.xOf(t))); }
    QImage grab() {
        QImage img(w.size(), QImage::Format_ARGB32);
        w.render(&img);
        return img;
    }
};

uint32_t rgbAt(const QImage& img, int x, int y) { return img.pixel(x, y) & 0xFFFFFF; }

}  // namespace

TEST(PatternPixels, BubblesAreHatchedUnderTheKernelsAndNowhereElse) {
    Window f(example7(false));
    const QImage img = f.grab();
    const int lane0 = laneOfStream(f.l, 0, 7), lane1 = laneOfStream(f.l, 1, 7);
    const int y0 = f.w.laneY(lane0) + 2, y1 = f.w.laneY(lane1) + 2;
    ASSERT_GT(y0, 0);
    ASSERT_GT(y1, 0);
    auto expectHatch = [&](TimeNs from, TimeNs to, int y, const char* what) {
        for (int x = f.x(from) + 1; x < f.x(to) - 1; ++x)
            EXPECT_EQ(rgbAt(img, x, y), palette::bubbleHatchAt(x, y) ? palette::kBubbleHatch : palette::kBubbleTint)
                << what << " x=" << x;
    };
    expectHatch(us(20), us(40), y0, "stage 0 stall");
    expectHatch(us(60), us(70), y0, "stage 0 stall");
    expectHatch(us(0), us(10), y1, "stage 1 fill");
    expectHatch(us(70), us(90), y1, "stage 1 drain");
    // Kernels keep their colour; nothing is shaded after the window.
    EXPECT_EQ(rgbAt(img, f.x(us(15)), y0), palette::kCompute);
    EXPECT_EQ(rgbAt(img, f.x(us(50)), y0), palette::kCompute);
    EXPECT_EQ(rgbAt(img, f.x(us(30)), y1), palette::kCompute);
    for (int y : {y0, y1})
        for (int x = f.x(us(90)) + 2; x < TimelineWidget::kLabelWidth + Window::kWidth; ++x) {
            const uint32_t c = rgbAt(img, x, y);
            EXPECT_TRUE(c != palette::kBubbleTint && c != palette::kBubbleHatch) << x;
        }
    // For a look at what failed: the temporary directory, never the working one.
    if (::testing::Test::HasFailure())
        img.save(QString::fromStdString(::testing::TempDir()) + "/test_gui_patterns_bubbles.png");
}

TEST(PatternPixels, SelectingAReceiveOutlinesItsSendAndDrawsTheArrow) {
    Window f(example6());
    const EventRef recv1 = kth(f.l, 1, 14, 0), send0 = kth(f.l, 0, 13, 0);
    f.w.selectEvent(recv1, false);
    const QImage img = f.grab();
    // The arrow runs down x(100 µs), from rank 0's send to rank 1's receive.
    const int top = f.w.laneY(send0.lane) + 18, bottom = f.w.laneY(recv1.lane);
    ASSERT_LT(top + 10, bottom);
    const int x = f.x(us(100));
    for (int y = top + 4; y < bottom - 10; y += 7) {
        bool found = false;
        for (int dx = -2; dx <= 2; ++dx) found |= rgbAt(img, x + dx, y) == palette::kPeerLink;
        EXPECT_TRUE(found) << "y=" << y;
    }
    // Nowhere else: the arrow is one line.
    int elsewhere = 0;
    for (int y = top + 4; y < bottom - 10; ++y)
        for (int xx = f.x(us(150)); xx < f.x(us(295)); ++xx) elsewhere += rgbAt(img, xx, y) == palette::kPeerLink;
    EXPECT_EQ(elsewhere, 0);
    // The partner's outline, along its top edge.
    int outline = 0;
    const int yTop = f.w.laneY(send0.lane);
    for (int xx = f.x(us(110)); xx < f.x(us(150)); ++xx)
        for (int dy = 0; dy <= 2; ++dy) outline += rgbAt(img, xx, yTop + dy) == palette::kHighlight;
    EXPECT_GT(outline, 30);
    if (::testing::Test::HasFailure())
        img.save(QString::fromStdString(::testing::TempDir()) + "/test_gui_patterns_link.png");
}

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

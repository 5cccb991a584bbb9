// The Collective progress panel: its model (plain C++) on a synthetic stalled
// job and on hand-made sequences (which calls are shown, in what order), and
// the widget on the offscreen platform, painting each cell in its state's
// colour with the stuck rank's missing call in vermilion. Set
// OSC_GUI_TEST_SAVE=DIR to keep the rendered panel as DIR/hang-panel.png.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/synth/workload_synth.h"
#include "gui/model/hang_progress.h"
#include "gui/render/palette.h"
#include "gui/widgets/hang_panel.h"
#include "gui/widgets/main_window.h"

#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QImage>
#include "tests/support/stalled_job.h"

#include <cstdlib>

using namespace osc;
using namespace osc::gui;

namespace {

using testsupport::stalledJob;

TEST(HangProgressModel, AStalledJob) {
    const Capture c = synth::synthesizeWorkload(stalledJob());
    const HangProgress p = hangProgress(hang::analyzeHang(&c, {}));
    EXPECT_EQ(p.verdict, "hang");
    ASSERT_EQ(p.blocks.size(), 1u);
    const ProgressBlock& b = p.blocks[0];
    ASSERT_EQ(b.columns.size(), 5u);  // AllReduce #0-#3 completed, #4 the hung one
    EXPECT_EQ(b.hiddenBefore, 0u);
    EXPECT_TRUE(b.columns[4].hung);
    EXPECT_EQ(b.columns[4].label, "#4");
    EXPECT_EQ(b.columns[4].tooltip, "AllReduce #4");
    ASSERT_EQ(b.rows.size(), 4u);
    for (size_t r = 0; r < 4; ++r) {
        EXPECT_EQ(b.rows[r].stuck, r == 2);
        for (size_t col = 0; col < 4; ++col) EXPECT_EQ(b.rows[r].cells[col], ProgressState::Completed);
        EXPECT_EQ(b.rows[r].cells[4], r == 2 ? ProgressState::NotEntered : ProgressState::Waiting);
    }
    EXPECT_EQ(b.rows[2].summary, "last completed AllReduce #3; never entered AllReduce #4");
}

// 100 calls, AllReduce and AllGather numbered apart and interleaved; the
// ranks hang at the 61st: the window ends three calls after it.
TEST(HangProgressModel, TheWindowEndsJustAfterTheHungCallInCallOrder) {
    hang::JobSequences job;
    job.endKnown = true;
    job.endNs = 1'000'000'000'000;
    hang::CommunicatorProgress comm;
    comm.id = "0x1";
    comm.size = 2;
    for (int r = 0; r < 2; ++r) {
        hang::RankProgress rank;
        rank.rank = rank.commRank = r;
        for (int i = 0; i < 100 && (r == 0 || i < 60); ++i) {
            const std::string coll = i % 2 ? "AllGather" : "AllReduce";
            hang::Call c;
            c.slot = {coll, static_cast<uint64_t>(i / 2)};
            c.collective = coll;
            c.enteredNs = i * 1'000'000;
            c.completed = i < 60;
            rank.calls.push_back(c);
        }
        comm.ranks.push_back(rank);
    }
    job.communicators.push_back(comm);
    const HangProgress p = hangProgress(hang::analyzeSequences(job), 10);
    const ProgressBlock& b = p.blocks[0];
    ASSERT_EQ(b.columns.size(), 10u);
    EXPECT_EQ(b.hiddenBefore, 54u);
    EXPECT_TRUE(b.columns[6].hung);  // the 61st call: AllReduce #30
    EXPECT_EQ(b.columns[6].tooltip, "AllReduce #30");
    EXPECT_EQ(b.columns[7].tooltip, "AllGather #30");  // in call order, not by number
    EXPECT_TRUE(b.rows[1].stuck);
}

TEST(HangPanelWidget, PaintsEachCellInItsStatesColour) {
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(stalledJob()));
    auto model = std::make_shared<TimelineModel>(capture);
    HangPanel panel;
    panel.resize(900, 320);
    panel.setData(model, false);
    EXPECT_FALSE(panel.view()->progress().has_value());  // not shown yet: nothing computed
    panel.compute();
    ASSERT_TRUE(panel.view()->progress().has_value()) << panel.view()->message().toStdString();
    HangProgressView& view = *panel.view();
    view.resize(900, view.minimumHeight());
    const QImage img = view.grab().toImage();
    const auto centre = [&](size_t row, size_t col) {
        const QRect r = view.cellRect(0, row, col);
        return img.pixel(r.center()) & 0xFFFFFF;
    };
    EXPECT_EQ(centre(0, 0), palette::kOverlap);      // completed
    EXPECT_EQ(centre(0, 4), palette::kExposedWait);  // rank 0 waits in #4
    EXPECT_EQ(centre(2, 4), palette::kExposed);      // rank 2 never entered it
    EXPECT_EQ(centre(2, 3), palette::kOverlap);
    // The hung column is outlined in vermilion just left of its cells.
    const QRect hung = view.cellRect(0, 1, 4);
    EXPECT_EQ(img.pixel(hung.left() - 2, hung.center().y()) & 0xFFFFFF, palette::kExposed);
    EXPECT_EQ(img.pixel(img.width() - 2, 2) & 0xFFFFFF, palette::kBackground);
    if (const char* dir = std::getenv("OSC_GUI_TEST_SAVE")) img.save(QString(dir) + "/hang-panel.png");
    if (::testing::Test::HasFailure()) img.save(QDir::tempPath() + "/test_gui_hang_failure.png");
}

TEST(HangPanelWidget, TheViewMenuShowsItForTheLoadedCapture) {
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(stalledJob()));
    LoadedCapture loaded;
    loaded.model = std::make_shared<TimelineModel>(capture);
    loaded.analysis = std::make_shared<const Analysis>(analyze(*capture));
    loaded.path = "stall";
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.showLoaded(loaded);
    auto* panel = window.findChild<HangPanel*>();
    ASSERT_NE(panel, nullptr);
    // The analysis runs on the banner's worker, never on the GUI thread: its
    // result reaches the panel through the event loop, shown or not.
    EXPECT_FALSE(panel->view()->progress().has_value());
    ASSERT_TRUE(window.raisePanel("hang"));
    QApplication::processEvents();
    window.waitForHangAnalysis();
    ASSERT_TRUE(panel->view()->progress().has_value()) << panel->view()->message().toStdString();
    EXPECT_EQ(panel->view()->progress()->verdict, "hang");
}

TEST(HangPanelWidget, SaysWhatItNeedsWithoutCaptures) {
    HangPanel panel;
    panel.setData(nullptr, true);
    panel.compute();
    EXPECT_TRUE(panel.view()->message().contains("captures")) << panel.view()->message().toStdString();
}

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

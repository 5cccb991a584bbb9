// A hung job shown as hung (issue 40 item 2): what the window takes from the
// hang analysis (gui/model/hang_focus.h) and what it shows, on a synthetic
// stalled job (analyzer/synth/README.md, "Hangs and desyncs") and on our
// capture of a real hang, examples/h200/pytorch_hang (its README: rank 1
// skipped the seventh all-reduce, rank 0 waited in it until PyTorch's
// watchdog aborted it; rank 0's capture did not finish).
//
// The real capture's answers, worked out from its two SQLite files:
//   rank 0 starts 118,185,127 ns after rank 1 (capture_start_utc_ns
//   1795735704566382212 - 1795735704448197085), and the timeline is rank 1's
//   clock, so rank 0's seventh NCCL kernel [903,747,909, 86,943,975,653) is
//   [1,021,933,036, 87,062,160,780) on it; the inputs end at 87,716,926,210
//   (rank 1's last record), 86,694,993,174 ns (86.7 s) after it began;
//   1795735704448197085 + 1,021,933,036 ns is 23:28:25.470 UTC; the plugin's
//   commHash 5804311278971576509 is 0x508d0e5b0ce4e0bd.
#include "analyzer/hang/hang.h"
#include "analyzer/synth/workload_synth.h"
#include "gui/model/hang_focus.h"
#include "gui/render/palette.h"
#include "gui/widgets/capture_loader.h"
#include "gui/widgets/hang_view.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/analysed_capture.h"

#include <gtest/gtest.h>
#include <QApplication>
#include <QDockWidget>
#include <QImage>
#include "tests/support/stalled_job.h"

#include <algorithm>
#include <filesystem>
#include <vector>

using namespace osc;
using namespace osc::gui;

namespace {

constexpr TimeNs kHungStart = 1'021'933'036, kHungEnd = 87'062'160'780;

const char* realHang() { return OSC_TEST_EXAMPLES "/h200/pytorch_hang"; }

int groupOfRank(const TimelineModel& m, int rank) {
    for (size_t g = 0; g < m.groups().size(); ++g)
        if (m.processOf(static_cast<int>(g)).rank == rank && m.groups()[g].device >= 0) return static_cast<int>(g);
    return -1;
}

int overlapLane(const TimelineModel& m, int group) {
    for (int l : m.groups()[static_cast<size_t>(group)].lanes)
        if (m.lane(l).kind == LaneKind::Overlap) return l;
    return -1;
}

using testsupport::stalledJob;

const LoadedCapture& realCapture() {
    static const LoadedCapture l = loadForViewing(realHang(), {}, nullptr, {});
    return l;
}

}  // namespace

TEST(HangFocus, AStalledJobWaitsInTheCallRank2NeverEntered) {
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(stalledJob()));
    LoadedCapture l = guitest::analysed(capture);
    const hang::HangAnalysis a = hang::analyzeHang(capture.get(), {});
    const HangFocus f = hangFocus(*l.model, a);
    ASSERT_TRUE(f.found());
    // Two all-reduces per step (the panel's test): step 2's first is #4.
    EXPECT_EQ(f.headline.rfind("HANG: rank 2 never entered AllReduce #4 of 0x", 0), 0u) << f.headline;
    EXPECT_EQ(f.headline.find(". "), std::string::npos) << "one sentence: " << f.headline;
    ASSERT_EQ(f.waits.size(), 3u);  // ranks 0, 1 and 3
    for (const HangWait& w : f.waits) {
        EXPECT_NE(w.group, groupOfRank(*l.model, 2));
        EXPECT_EQ(w.call, "AllReduce #4");
        // The synthetic hang launches the call and no kernel ever runs: waited until the capture stopped.
        EXPECT_FALSE(w.kernel.valid());
        EXPECT_EQ(w.end, l.model->end());
        EXPECT_LT(w.start, w.end);
        EXPECT_NE(w.text.find("never completed"), std::string::npos) << w.text;
        EXPECT_NE(w.text.find("rank 2"), std::string::npos) << w.text;
        EXPECT_EQ(f.groupStatus(w.group), "waits in AllReduce #4, never completed");
    }
    ASSERT_EQ(f.stuck.size(), 1u);
    EXPECT_EQ(f.stuck[0].group, groupOfRank(*l.model, 2));
    EXPECT_EQ(f.stuck[0].text, "never entered AllReduce #4; last completed AllReduce #3");
    EXPECT_EQ(f.groupStatus(f.stuck[0].group), "never entered AllReduce #4");
    // Framed from three calls before AllReduce #4 (#1; rank 2, which never
    // entered it, from three before the call it owes) to half as far past
    // the first waiting rank's entry.
    const int g2 = groupOfRank(*l.model, 2);
    const Device& d2 = *l.model->deviceOf(g2);
    std::vector<TimeNs> comm2;
    for (uint32_t k : l.model->groups()[static_cast<size_t>(g2)].commKernels) comm2.push_back(d2.kernels.start[k]);
    std::sort(comm2.begin(), comm2.end());
    ASSERT_EQ(comm2.size(), 4u);  // #0 to #3
    TimeNs since = INT64_MAX;
    for (const HangWait& w : f.waits) since = std::min(since, w.start);
    ASSERT_TRUE(f.frame.has_value());
    EXPECT_LE(f.frame->start, comm2[1]);
    EXPECT_GT(f.frame->end, since);
    EXPECT_NEAR(static_cast<double>(f.frame->end - since), static_cast<double>(since - f.frame->start) / 2, 1.0);
}

// Rank 1 asks for twice the bytes in step 3's first all-reduce (#6): every
// call still completes, so nothing waits; the view opens on that call.
TEST(HangFocus, ADesyncIsFramedOnTheCallMadeDifferently) {
    synth::WorkloadSpec s = stalledJob();
    s.stallRank = s.stallAtStep = -1;
    s.desyncRank = 1;
    s.desyncAtStep = 3;
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(s));
    LoadedCapture l = guitest::analysed(capture);
    const HangFocus f = hangFocus(*l.model, hang::analyzeHang(capture.get(), {}));
    ASSERT_TRUE(f.found());
    EXPECT_EQ(f.verdict, hang::Verdict::Desync);
    EXPECT_EQ(f.headline.rfind("DESYNC: AllReduce #6 of 0x", 0), 0u) << f.headline;
    EXPECT_TRUE(f.waits.empty() && f.stuck.empty());
    // Every rank's seventh communication kernel starts inside the frame.
    ASSERT_TRUE(f.frame);
    for (size_t g = 0; g < l.model->groups().size(); ++g) {
        const DeviceGroup& group = l.model->groups()[g];
        if (group.commKernels.size() < 7) continue;
        const TimeNs start = l.model->deviceOf(static_cast<int>(g))->kernels.start[group.commKernels[6]];
        EXPECT_TRUE(f.frame->start <= start && start < f.frame->end) << g;
    }
}

TEST(HangFocus, AHealthyJobHasNothingToShow) {
    synth::WorkloadSpec s = stalledJob();
    s.stallRank = -1;
    s.stallAtStep = -1;
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(s));
    LoadedCapture l = guitest::analysed(capture);
    const HangFocus f = hangFocus(*l.model, hang::analyzeHang(capture.get(), {}));
    EXPECT_FALSE(f.found());
    EXPECT_TRUE(f.waits.empty() && f.stuck.empty() && !f.frame);
}

TEST(HangFocus, TheRealHangWaitsInRank0sSeventhAllReduce) {
    const LoadedCapture& l = realCapture();
    ASSERT_TRUE(l.model);
    const HangFocus f = hangFocus(*l.model, hang::analyzeHang(&l.model->capture(), {}));
    EXPECT_EQ(f.headline,
              "HANG: rank 1 never entered AllReduce #6 of 0x508d0e5b0ce4e0bd, which rank 0 has waited "
              "in since 23:28:25.470 UTC (86.7 s before the inputs end).");
    // The kernel stopped (the watchdog's abort) before the capture's last record: not "until the capture ended".
    EXPECT_LT(kHungEnd, l.model->end());
    ASSERT_EQ(f.waits.size(), 1u);
    const HangWait& w = f.waits[0];
    EXPECT_EQ(w.group, groupOfRank(*l.model, 0));
    ASSERT_TRUE(w.kernel.valid());
    EXPECT_EQ(w.start, kHungStart);
    EXPECT_EQ(w.end, kHungEnd);
    EXPECT_NE(w.text.find("86.04 s from 1.021933 s until its kernel stopped (aborted, not completed)"),
              std::string::npos)
        << w.text;
    ASSERT_EQ(f.stuck.size(), 1u);
    EXPECT_EQ(f.stuck[0].group, groupOfRank(*l.model, 1));
    EXPECT_EQ(f.stuck[0].text, "never entered AllReduce #6; last completed AllReduce #5");
    ASSERT_TRUE(f.frame);
    EXPECT_TRUE(f.frame->start < kHungStart && kHungStart < f.frame->end);
}

TEST(HangFocus, MarkedOnTheModelAsWaitingNotTransfer) {
    const LoadedCapture fresh = loadForViewing(realHang(), {}, nullptr, {});
    TimelineModel& m = *fresh.model;
    const int g0 = groupOfRank(m, 0), g1 = groupOfRank(m, 1);
    // Before: rank 0 arrived last at the completed all-reduces, and the hung one is exposed, not waiting.
    EXPECT_NE(m.groups()[static_cast<size_t>(g0)].label.find("last at"), std::string::npos);
    EXPECT_EQ(m.groups()[static_cast<size_t>(g0)].exposedWait.covered(kHungStart, kHungEnd), 0);
    const HangFocus f = hangFocus(m, hang::analyzeHang(&m.capture(), {}));
    markHang(m, f);
    const std::string& label0 = m.groups()[static_cast<size_t>(g0)].label;
    EXPECT_EQ(label0.find("last at"), std::string::npos) << label0;
    EXPECT_TRUE(label0.ends_with(" · waits in AllReduce #6, never completed")) << label0;
    EXPECT_TRUE(m.groups()[static_cast<size_t>(g1)].label.ends_with(" · never entered AllReduce #6"));
    // Nothing runs beside it on rank 0: the whole 86.04 s is exposed waiting.
    EXPECT_EQ(m.groups()[static_cast<size_t>(g0)].exposedWait.covered(kHungStart, kHungEnd), kHungEnd - kHungStart);

    DetailList d = {{"kernel", "ncclDevKernel_AllReduce"},
                    {"transfer", "86.04 s (matched on no other rank)"},
                    {"bandwidth", "0.00 GB/s"}};
    describeHungKernel(f, f.waits[0].kernel, d);
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0].first, "kernel");
    EXPECT_EQ(d[1], (std::pair<std::string, std::string>{"state", "never completed (hang)"}));
    EXPECT_EQ(d[2].first, "waiting");
}

TEST(HangWindow, OpensOnTheStuckCallWithTheVerdictAndTheWarnings) {
    MainWindow w;
    w.resize(1600, 950);
    w.show();
    w.showLoaded(realCapture());
    w.waitForHangAnalysis();
    QApplication::processEvents();
    HangBanner* banner = w.hangBanner();
    ASSERT_TRUE(banner->isVisible());
    EXPECT_TRUE(banner->headline().startsWith("HANG: rank 1 never entered AllReduce #6"));
    EXPECT_TRUE(banner->warningsText().contains("rank 0 (vm:3130): the capture did not finish"))
        << banner->warningsText().toStdString();
    // The Collective progress panel raised, and the view on the stuck call.
    auto* dock = w.findChild<QDockWidget*>("hang");
    ASSERT_TRUE(dock);
    EXPECT_TRUE(dock->isVisible());
    const ViewRange v = w.timeline()->viewRange();
    EXPECT_TRUE(v.start < kHungStart && kHungStart < v.end) << v.start << " " << v.end;
    EXPECT_LT(v.length(), 1'000'000'000);  // not the 86 s capture
    ASSERT_EQ(v, *banner->focus()->frame);

    // Rank 0's overlap lane is amber (waiting) over the hung call, right up to the view's edge.
    TimelineModel& m = *w.timeline()->model();
    const int lane = overlapLane(m, groupOfRank(m, 0));
    ASSERT_GE(lane, 0);
    w.timeline()->revealLane(lane);
    QApplication::processEvents();
    const int y = w.timeline()->laneY(lane);
    ASSERT_GE(y, 0);
    const QImage img = w.timeline()->grab().toImage();
    const int x = w.timeline()->width() - 4;
    EXPECT_EQ(img.pixel(x, y + 2) & 0xFFFFFF, palette::kExposedWait) << std::hex << img.pixel(x, y + 2);

    // Details of the hung kernel: waiting that never completed, no transfer.
    w.timeline()->selectEvent(banner->focus()->waits[0].kernel, false);
    QApplication::processEvents();
    const QString details = w.detailsText();
    EXPECT_TRUE(details.contains("state: never completed (hang)")) << details.toStdString();
    EXPECT_FALSE(details.contains("\ntransfer:")) << details.toStdString();
}

TEST(HangWindow, AHealthyCaptureShowsNoBanner) {
    synth::WorkloadSpec s = stalledJob();
    s.stallRank = -1;
    s.stallAtStep = -1;
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    const LoadedCapture l = guitest::analysed(std::make_shared<Capture>(synth::synthesizeWorkload(s)));
    w.showLoaded(l);
    const ViewRange before = w.timeline()->viewRange();
    w.waitForHangAnalysis();
    EXPECT_FALSE(w.hangBanner()->isVisible());
    EXPECT_EQ(w.timeline()->viewRange(), before);
    EXPECT_EQ(w.timeline()->hangFocus(), nullptr);
}

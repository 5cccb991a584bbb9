// CPU lanes and flow arrows: host threads with their API calls and PyTorch
// operators nested by time, and the launch -> GPU work links, checked on a
// hand-built capture; the arrow's pixels on the offscreen widget.
#include "analyzer/capture/api_call_names.h"
#include "gui/model/event_details.h"
#include "gui/model/flows.h"
#include "gui/model/host_lanes.h"
#include "gui/model/timeline_model.h"
#include "gui/render/palette.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>
#include <QApplication>
#include <QImage>

#include <algorithm>

using namespace osc;
using namespace osc::gui;

namespace {

constexpr uint64_t kMain = (uint64_t{100} << 24) | 100, kOther = (uint64_t{100} << 24) | 7;

// Thread 100: operator aten::mm [0, 900) launching gemm (correlation 1) with
// cudaLaunchKernel [100, 300) and, nested deeper, the driver call
// cuLaunchKernel [150, 250); then aten::add [1000, 1400) launching the
// AllReduce (correlation 2) at [1100, 1200). Thread 7: cudaMemcpyAsync
// [50, 120) (correlation 3) for the copy. GPU: gemm [1000, 5000), AllReduce
// [4000, 7000), copy [500, 900) as in smallCapture.
std::shared_ptr<Capture> hostCapture() {
    auto c = std::make_shared<Capture>();
    Process p;
    p.host = "node";
    p.pid = 100;
    p.rank = 0;
    Device& d = p.deviceById(0);
    guitest::addKernel(*c, d, 1000, 5000, 7, "gemm_kernel", 1);
    guitest::addKernel(*c, d, 4000, 7000, 13, guitest::kAllReduce, 2);
    guitest::addCopy(d, 500, 900, 20, CopyKind::HtoD, 4096);
    d.copies.correlation.back() = 3;
    guitest::addCpuOp(*c, p, 0, 900, kMain, "aten::mm");
    guitest::addApiCall(*c, p, 100, 300, kMain, "cudaLaunchKernel", 1);
    guitest::addApiCall(*c, p, 150, 250, kMain, "cuLaunchKernel", 0);
    guitest::addCpuOp(*c, p, 1000, 1400, kMain, "aten::add");
    guitest::addApiCall(*c, p, 1100, 1200, kMain, "cudaLaunchKernel", 2);
    guitest::addApiCall(*c, p, 50, 120, kOther, "cudaMemcpyAsync", 3);
    c->processes.push_back(std::move(p));
    c->finalize();
    return c;
}

std::string labelOf(const TimelineModel& m, EventRef r) {
    const Lane& lane = m.lane(r.lane);
    return eventLabel(m, lane, lane.rows[static_cast<size_t>(r.row)], r.index);
}

}  // namespace

TEST(HostLanes, OneLanePerThreadWithCallsNestedUnderOperators) {
    const auto lanes = buildHostLanes(hostCapture()->processes[0]);
    ASSERT_EQ(lanes.size(), 2u);
    // The busiest thread first: 5 events on thread 100, 1 on thread 7.
    EXPECT_EQ(lanes[0].globalTid, kMain);
    EXPECT_EQ(lanes[0].label, "CPU 100: 2 ops, 3 calls");
    EXPECT_EQ(lanes[1].label, "CPU 7: 1 call");
    ASSERT_EQ(lanes[0].rows.size(), 3u);  // operator, runtime call, driver call
    EXPECT_EQ(lanes[0].rows[0].size(), 2u);
    EXPECT_EQ(lanes[0].rows[0].source[0], EventSource::CpuOp);
    EXPECT_EQ(lanes[0].rows[1].size(), 2u);  // both cudaLaunchKernel, one per operator
    EXPECT_EQ(lanes[0].rows[1].start[1], 1100);
    EXPECT_EQ(lanes[0].rows[2].size(), 1u);
    EXPECT_EQ(lanes[0].rows[2].start[0], 150);
}

TEST(HostLanes, SitAboveTheOverlapLaneAndHideWithTheViewToggle) {
    TimelineModel m(hostCapture());
    const auto& order = m.groups()[0].lanes;
    ASSERT_EQ(order.size(), 6u);  // 2 CPU lanes, overlap, 3 streams
    EXPECT_EQ(m.lane(order[0]).kind, LaneKind::Host);
    EXPECT_EQ(m.lane(order[1]).kind, LaneKind::Host);
    EXPECT_EQ(m.lane(order[2]).kind, LaneKind::Overlap);
    EXPECT_TRUE(m.hasHostLanes());
    m.setHostLanesShown(false);
    EXPECT_EQ(m.visibleLanes().size(), 4u);
}

// Issue 28 item 2: a process that only opened GPU 0 (our captures list it as
// a device) keeps its CPU lanes with GPU 1, where its work ran.
TEST(HostLanes, GoWithTheGpuTheProcessRanWorkOn) {
    auto c = std::make_shared<Capture>();
    Process p;
    p.pid = 100;
    p.deviceById(0);  // opened, never used
    Device& used = p.deviceById(1);
    guitest::addKernel(*c, used, 1000, 5000, 7, "gemm_kernel", 1);
    guitest::addApiCall(*c, p, 100, 300, kMain, "cudaLaunchKernel", 1);
    c->processes.push_back(std::move(p));
    c->finalize();
    TimelineModel m(c);
    ASSERT_EQ(m.groups().size(), 2u);
    for (const DeviceGroup& g : m.groups()) {
        const bool hostLanes =
            std::any_of(g.lanes.begin(), g.lanes.end(), [&](int l) { return m.lane(l).kind == LaneKind::Host; });
        EXPECT_EQ(hostLanes, c->processes[0].devices[static_cast<size_t>(g.device)].id == 1) << g.label;
    }
}

// Issue 28 item 5: AMD traces' host calls are HIP calls, and a stream of
// another library's communication kernels is named after it.
TEST(HostLanes, HipCallsAreCalledHipAndOtherLibrariesNameTheirStreams) {
    auto c = std::make_shared<Capture>();
    Process p;
    p.pid = 100;
    Device& d = p.deviceById(0);
    guitest::addKernel(*c, d, 1000, 5000, 7, "gemm_kernel", 1);
    guitest::addKernel(*c, d, 2000, 3000, 9, "void deep_ep::intranode::dispatch<8>(int*)", 2);
    guitest::addApiCall(*c, p, 100, 300, kMain, "hipLaunchKernel", 1);
    c->processes.push_back(std::move(p));
    c->finalize();
    EXPECT_EQ(apiFamiliesOf(*c), "HIP");
    const TimelineModel m(c);
    const EventRef gemm = m.findKernel(0, 0);
    const EventRef call = flowsOf(m, gemm).at(0).from;
    bool hip = false;
    for (const auto& [k, v] : eventDetails(m, call)) hip |= k == "HIP runtime call" && v == "hipLaunchKernel";
    EXPECT_TRUE(hip);
    bool named = false;
    for (int l : m.groups()[0].lanes) named |= m.lane(l).label == "stream 9 · DeepEP";
    EXPECT_TRUE(named);
}

TEST(Flows, LinkLaunchesAndGpuWorkBothWays) {
    const TimelineModel m(hostCapture());
    const EventRef gemm = m.findKernel(0, 0);
    auto flows = flowsOf(m, gemm);
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(flows[0].to, gemm);
    EXPECT_EQ(labelOf(m, flows[0].from), "cudaLaunchKernel");
    EXPECT_EQ(m.lane(flows[0].from.lane).rows[static_cast<size_t>(flows[0].from.row)].start[flows[0].from.index], 100);
    // From the call to its kernel.
    const auto back = flowsOf(m, flows[0].from);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].to, gemm);
    // The copy's launch sits on the other thread's lane.
    const EventRef copy = m.findOnStream(0, 20, 500, EventSource::Copy);
    flows = flowsOf(m, copy);
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(labelOf(m, flows[0].from), "cudaMemcpyAsync");
    EXPECT_EQ(m.lane(flows[0].from.lane).thread, kOther);
    // An operator: every launch inside it (aten::add launched the AllReduce).
    const EventRef add = {m.groups()[0].lanes[0], 0, 1};
    ASSERT_EQ(labelOf(m, add), "aten::add");
    flows = flowsOf(m, add);
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(flows[0].to, m.findKernel(0, 1));
    // The driver call has no correlation of its own: no flow.
    EXPECT_TRUE(flowsOf(m, {m.groups()[0].lanes[0], 2, 0}).empty());
    // Details say who launched what.
    const DetailList d = eventDetails(m, gemm);
    bool launchedBy = false;
    for (const auto& [k, v] : d) launchedBy |= k == "launched by" && v.rfind("cudaLaunchKernel at ", 0) == 0;
    EXPECT_TRUE(launchedBy);
}

TEST(Flows, SelectingAKernelDrawsAnArrowFromItsLaunch) {
    auto model = std::make_shared<TimelineModel>(hostCapture());
    TimelineWidget w;
    w.resize(TimelineWidget::kLabelWidth + 936, 500);
    w.setModel(model);
    auto countFlowPixels = [&] {
        QImage img(w.size(), QImage::Format_ARGB32);
        w.render(&img);
        int n = 0;
        for (int y = TimelineWidget::kRulerHeight; y < img.height(); ++y)
            for (int x = TimelineWidget::kLabelWidth; x < img.width(); ++x)
                n += (img.pixel(x, y) & 0xFFFFFF) == palette::kFlow;
        return n;
    };
    EXPECT_EQ(countFlowPixels(), 0);
    w.selectEvent(model->findKernel(0, 0), false);
    ASSERT_EQ(w.flows().size(), 1u);
    // A curve from the CPU lane down to the kernel: tens of pixels at least.
    EXPECT_GT(countFlowPixels(), 30);
    model->setHostLanesShown(false);
    w.relayout();
    EXPECT_EQ(countFlowPixels(), 0);  // no arrow to a lane that is not shown
}

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

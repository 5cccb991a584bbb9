// CPU lanes and flow arrows: host threads with their API calls and PyTorch
// operators nested by time, and the launch -> GPU work links, checked on a
// hand-built capture; the arrow's pixels on the offscreen widget.
#include "analyzer/capture/api_call_names.h"
#include "gui/model/event_details.h"
#include "gui/model/event_links.h"
#include "gui/model/flows.h"
#include "gui/model/host_lanes.h"
#include "gui/model/kernel_find.h"
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

namespace {

const Lane& mainThreadLane(const TimelineModel& m) {
    for (const Lane& l : m.lanes())
        if (l.kind == LaneKind::Host && l.thread == kMain) return l;
    throw std::runtime_error("no lane for the main thread");
}

}  // namespace

TEST(HostLanes, ZoomedOutALaneShowsOnlyTheRowsWithSomethingToSee) {
    // Issue 30 item 15: CPU lanes stayed tall and empty when zoomed out.
    // Thread 100: row 0 operators (longest 900 ns), row 1 runtime calls
    // (200 ns), row 2 the driver call (100 ns). A row shows while its longest
    // event spans LaneLayout::kMinRowEventPx (3) pixels.
    const TimelineModel m(hostCapture());
    const Lane& lane = mainThreadLane(m);
    ASSERT_EQ(lane.rows.size(), 3u);
    EXPECT_EQ(lane.rowLongest, (std::vector<TimeNs>{900, 200, 100}));
    EXPECT_EQ(LaneLayout::shownRows(lane, 10), 3);    // 100 ns = 10 px
    EXPECT_EQ(LaneLayout::shownRows(lane, 50), 2);    // 200 ns = 4 px, 100 ns = 2 px
    EXPECT_EQ(LaneLayout::shownRows(lane, 1000), 1);  // everything under a pixel: one row
    EXPECT_EQ(LaneLayout::shownRows(lane, 0), 3);     // no zoom given: all

    // The widget relayouts as it zooms: the lane's height follows. A kernel
    // at 1 ms lets the view zoom out to 1 µs per pixel.
    auto wide = hostCapture();
    guitest::addKernel(*wide, wide->processes[0].devices[0], 1'000'000, 1'001'000, 7, "gemm_kernel");
    wide->finalize();
    auto model = std::make_shared<TimelineModel>(wide);
    TimelineWidget w;
    w.resize(TimelineWidget::kLabelWidth + 1000, 600);
    w.setModel(model);
    int lane0 = -1;
    for (size_t l = 0; l < model->lanes().size(); ++l)
        if (model->lane(static_cast<int>(l)).kind == LaneKind::Host && model->lane(static_cast<int>(l)).thread == kMain)
            lane0 = static_cast<int>(l);
    const int row = w.layout().metrics().rowHeight;
    w.setViewRange({0, 10'000});  // 10 ns per px
    EXPECT_EQ(w.layout().slotOf(lane0)->height, 3 * row);
    w.setViewRange({0, 1'000'000});  // 1 µs per px
    EXPECT_EQ(w.layout().slotOf(lane0)->height, row);
    // A flow from a call on a row not shown ends on the last shown row, not in the next lane.
    const auto r = FrameBuilder(*model, w.layout()).eventRect(w.viewport(), {lane0, 2, 0});
    ASSERT_TRUE(r.has_value());
    EXPECT_LT(r->y, w.laneY(lane0) + row + 1);
}

TEST(Flows, DetailsLinksFollowALaunchBothWays) {
    // Issue 30 item 4: kernel -> launching call -> back; operator -> its GPU work.
    const TimelineModel m(hostCapture());
    const EventRef gemm = m.findKernel(0, 0);
    const std::vector<EventLink> fromKernel = eventLinks(m, gemm);
    ASSERT_EQ(fromKernel.size(), 2u);
    EXPECT_EQ(fromKernel[0].field, "→ launching call");
    EXPECT_EQ(labelOf(m, fromKernel[0].target), "cudaLaunchKernel");
    EXPECT_EQ(fromKernel[1].field, "→ its operator");
    EXPECT_EQ(labelOf(m, fromKernel[1].target), "aten::mm");
    const std::vector<EventLink> fromCall = eventLinks(m, fromKernel[0].target);
    ASSERT_GE(fromCall.size(), 1u);
    EXPECT_EQ(fromCall[0].field, "→ launched");
    EXPECT_EQ(fromCall[0].target, gemm) << "and back";
    const std::vector<EventLink> fromOp = eventLinks(m, fromKernel[1].target);
    ASSERT_EQ(fromOp.size(), 1u);
    EXPECT_EQ(fromOp[0].field, "→ GPU work");
    EXPECT_EQ(fromOp[0].target, gemm);
    // The driver call nested under the runtime call has the same operator.
    EXPECT_EQ(enclosingOperator(m, {fromKernel[0].target.lane, 2, 0}), fromKernel[1].target);
}

TEST(FindEverything, NamesOfEveryKindInTimeOrderWithTheirCounts) {
    // Issue 30 item 5. "mm" is in the operator aten::mm [0, 900), the kernel
    // gemm_kernel [1000, 5000) and the NVTX range "comm phase" [2000, 3000);
    // in no API call.
    auto c = hostCapture();
    guitest::addRange(*c, c->processes[0], 2000, 3000, "comm phase");
    c->finalize();
    const TimelineModel m(c);
    const FindResult r = findEvents(m, {"MM", std::nullopt, true});
    EXPECT_EQ(r.count, 3u);
    EXPECT_EQ(r.kernels, 1u);
    EXPECT_EQ(r.operators, 1u);
    EXPECT_EQ(r.ranges, 1u);
    EXPECT_EQ(r.calls, 0u);
    ASSERT_EQ(r.hits.size(), 3u);
    EXPECT_EQ(labelOf(m, r.hits[0].ref()), "aten::mm");
    EXPECT_EQ(labelOf(m, r.hits[1].ref()), "gemm_kernel");
    EXPECT_EQ(labelOf(m, r.hits[2].ref()), "comm phase");
    EXPECT_EQ(r.total_ns, 900 + 4000 + 1000);
    EXPECT_EQ(r.max_ns, 4000);
    // The kernels-only search (--select) still sees only the kernel.
    EXPECT_EQ(findKernels(m, {"MM", std::nullopt, true}).count, 1u);
    // API calls on nested rows: cudaLaunchKernel [100, 300) on row 1, the
    // driver's cuLaunchKernel [150, 250) on row 2, cudaLaunchKernel [1100, 1200).
    const FindResult calls = findEvents(m, {"launchkernel", std::nullopt, true});
    EXPECT_EQ(calls.calls, 3u);
    ASSERT_EQ(calls.hits.size(), 3u);
    EXPECT_EQ(calls.hits[0].row, 1);
    EXPECT_EQ(calls.hits[1].row, 2);
    EXPECT_EQ(calls.hits[2].row, 1);
    EXPECT_EQ(calls.hitsOf(calls.hits[1].lane, 2), (std::vector<uint32_t>{calls.hits[1].index}));
    EXPECT_EQ(calls.median_ns, 100);  // lower median of {200, 100, 100}
    EXPECT_TRUE(calls.hitsOf(-1, 0).empty());
}

TEST(FindEverything, AHitInAHiddenPlaceIsRevealed) {
    // A hit on a CPU lane with the CPU lanes off and its device collapsed.
    auto model = std::make_shared<TimelineModel>(hostCapture());
    TimelineWidget w;
    w.resize(TimelineWidget::kLabelWidth + 936, 500);
    w.setModel(model);
    const FindResult r = findEvents(*model, {"aten::add", std::nullopt, true});
    ASSERT_EQ(r.hits.size(), 1u);
    const int lane = r.hits[0].lane;
    const int group = model->lane(lane).group;
    model->setHostLanesShown(false);
    model->setCollapsed(group, true);
    w.relayout();
    EXPECT_EQ(w.layout().slotOf(lane), nullptr);
    EXPECT_TRUE(w.revealLane(lane));
    EXPECT_TRUE(model->hostLanesShown());
    EXPECT_FALSE(model->groups()[static_cast<size_t>(group)].collapsed);
    EXPECT_NE(w.layout().slotOf(lane), nullptr);
    EXPECT_FALSE(w.revealLane(lane));  // already in view: nothing changes
}

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

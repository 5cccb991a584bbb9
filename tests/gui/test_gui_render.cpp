// FrameBuilder: events where they run, folding of sub-pixel runs, coverage lane.
#include "analyzer/crossrank/analyze.h"
#include "gui/model/lane_layout.h"
#include "gui/render/frame_builder.h"
#include "gui/render/palette.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>

#include <map>

using namespace osc;
using namespace osc::gui;

namespace {

Viewport viewportFor(ViewRange r, double width) {
    Viewport vp;
    vp.scale = TimeScale(r, width);
    vp.left = 0;
    vp.top = 0;
    vp.clipTop = 0;
    vp.clipBottom = 10000;
    return vp;
}

// One rank, one stream: `n` kernels of 10 ns every 20 ns from t = 0, plus a
// long kernel [big, big + 50'000).
std::shared_ptr<Capture> denseCapture(int n, TimeNs big) {
    auto c = std::make_shared<Capture>();
    Process p;
    p.rank = 0;
    Device& d = p.deviceById(0);
    for (int i = 0; i < n; ++i) guitest::addKernel(*c, d, i * 20, i * 20 + 10, 7, "tiny");
    guitest::addKernel(*c, d, big, big + 50'000, 7, "big_kernel");
    c->processes.push_back(std::move(p));
    c->finalize();
    return c;
}

}  // namespace

TEST(FrameBuilder, DrawsAWideKernelAtItsComputedPixels) {
    const TimelineModel m(guitest::smallCapture());
    const LaneLayout layout(m);
    DrawList list;
    FrameBuilder(m, layout).build(viewportFor({0, 10000}, 1000), list);  // 10 ns per px
    const int stream7 = m.groups()[0].lanes[2];
    const float y = static_cast<float>(layout.slotOf(stream7)->y) + 1;
    bool found = false;
    for (const DrawRect& r : list.rects) {
        if (r.y == y && r.x == 100 && r.w == 400) {  // [1000, 5000) -> [100, 500)
            EXPECT_EQ(r.rgb, palette::kCompute);
            found = true;
        }
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(list.foldedBlocks, 0u);
    EXPECT_EQ(list.eventsDrawn, 5u);  // 3 kernels, 1 copy, 1 range
}

TEST(FrameBuilder, FoldsSubPixelEventsIntoFewBlocks) {
    // 100'000 kernels over 2 ms on 1000 px: 2 µs per px, ~100 kernels per px.
    const TimelineModel m(denseCapture(100'000, 3'000'000));
    const LaneLayout layout(m);
    DrawList list;
    FrameBuilder(m, layout).build(viewportFor({0, 4'000'000}, 1000), list);  // 4 µs per px
    // Half busy everywhere: one shade, so the folded columns merge into one block
    // (plus the big kernel, drawn on its own).
    EXPECT_LE(list.foldedBlocks, 3u);
    EXPECT_EQ(list.eventsDrawn, 1u);
    // The work stayed per pixel: the rectangles are few, not 100'000.
    EXPECT_LT(list.rects.size(), 20u);
    // The folded block is shaded at half busy.
    bool half = false;
    for (const DrawRect& r : list.rects) half |= r.rgb == palette::shaded(palette::kCompute, 0.5);
    EXPECT_TRUE(half);
}

TEST(FrameBuilder, KeepsAWideKernelThatStartsAmongTinyOnes) {
    // The big kernel starts at 1'000'005, inside a pixel full of tiny kernels.
    const TimelineModel m(denseCapture(100'000, 1'000'005));
    const LaneLayout layout(m);
    DrawList list;
    const Viewport vp = viewportFor({0, 4'000'000}, 1000);
    FrameBuilder(m, layout).build(vp, list);
    EXPECT_EQ(list.eventsDrawn, 1u);
    bool found = false;
    for (const DrawRect& r : list.rects) found |= (r.rgb == palette::kCompute && r.w >= 12 && r.x >= 249 && r.x <= 251);
    EXPECT_TRUE(found);
}

TEST(FrameBuilder, OverlapLaneShowsHiddenAndExposedCommunication) {
    const TimelineModel m(guitest::smallCapture());
    const LaneLayout layout(m);
    DrawList list;
    FrameBuilder(m, layout).build(viewportFor({0, 10000}, 1000), list);
    const LaneSlot* slot = layout.slotOf(m.groups()[0].lanes[1]);
    TimeNs overlapPx = 0, exposedPx = 0;
    for (const DrawRect& r : list.rects) {
        if (r.y < slot->y || r.y >= slot->y + slot->height) continue;
        if (r.rgb == palette::kOverlap) {
            overlapPx += static_cast<TimeNs>(r.w);
            EXPECT_FLOAT_EQ(r.h, static_cast<float>(slot->height - 2));  // fully covered columns
        }
        if (r.rgb == palette::kExposed) {
            exposedPx += static_cast<TimeNs>(r.w);
            EXPECT_EQ(r.x, 500);  // [5000, 6000)
        }
    }
    EXPECT_EQ(overlapPx, 200);  // 2000 ns at 10 ns per px
    EXPECT_EQ(exposedPx, 100);
}

TEST(FrameBuilder, OverlapLaneTellsExposedWaitingFromTransfer) {
    // As in the model test: rank 0's exposed [5000, 6000) is waiting for
    // rank 1 in [5000, 5500) and transfer in [5500, 6000).
    auto capture = guitest::smallCapture(2, 1500);
    TimelineModel m(capture);
    m.annotate(analyze(*capture));
    const LaneLayout layout(m);
    DrawList list;
    FrameBuilder(m, layout).build(viewportFor({0, 10000}, 1000), list);
    const LaneSlot* slot = layout.slotOf(m.groups()[0].lanes[1]);
    int waitX = -1, waitW = 0, exposedX = -1, exposedW = 0;
    for (const DrawRect& r : list.rects) {
        if (r.y < slot->y || r.y >= slot->y + slot->height) continue;
        if (r.rgb == palette::kExposedWait) waitX = static_cast<int>(r.x), waitW += static_cast<int>(r.w);
        if (r.rgb == palette::kExposed) exposedX = static_cast<int>(r.x), exposedW += static_cast<int>(r.w);
    }
    EXPECT_EQ(waitX, 500);
    EXPECT_EQ(waitW, 50);
    EXPECT_EQ(exposedX, 550);
    EXPECT_EQ(exposedW, 50);
}

TEST(FrameBuilder, EventRectFollowsTheScale) {
    const TimelineModel m(guitest::smallCapture());
    const LaneLayout layout(m);
    const EventRef ref = m.findKernel(0, 1);
    const auto r = FrameBuilder(m, layout).eventRect(viewportFor({2000, 12000}, 500), ref);  // 20 ns/px
    ASSERT_TRUE(r);
    EXPECT_EQ(r->x, 100);  // 4000 -> (4000 - 2000) / 20
    EXPECT_EQ(r->w, 150);
}

TEST(FrameBuilder, ManyLanesSplitAcrossThreadsGiveTheSameFrame) {
    // 6 ranks: 30 lanes, enough for the multi-threaded path on a multi-core box.
    const TimelineModel m(guitest::smallCapture(6, 1000));
    const LaneLayout layout(m);
    DrawList list;
    FrameBuilder(m, layout).build(viewportFor({0, 20000}, 1000), list);  // 20 ns per px
    EXPECT_EQ(list.eventsDrawn, 6u * 5u);
    // Every rank's first gemm [1000 + r*1000, 5000 + r*1000) at its own lane's y.
    for (size_t g = 0; g < 6; ++g) {
        const float y = static_cast<float>(layout.slotOf(m.groups()[g].lanes[2])->y) + 1;
        const float x = static_cast<float>(50 + 50 * g);
        bool found = false;
        for (const DrawRect& r : list.rects) found |= r.y == y && r.x == x && r.w == 200 && r.rgb == palette::kCompute;
        EXPECT_TRUE(found) << "rank " << g;
    }
}

// Texts are painted after every rectangle: labels of overlapping events in
// one row would be painted over each other. The first keeps its label; one
// starting inside it gets none; a later one clear of it gets its own.
TEST(FrameBuilder, OverlappingEventsInARowGetOneLabelNotASmear) {
    auto c = std::make_shared<Capture>();
    Process p;
    p.rank = 0;
    Device& d = p.deviceById(0);
    guitest::addKernel(*c, d, 1000, 5000, 7, "first");
    guitest::addKernel(*c, d, 1500, 5500, 7, "second");  // starts inside the first
    guitest::addKernel(*c, d, 7000, 9000, 7, "third");
    c->processes.push_back(std::move(p));
    c->finalize();
    const TimelineModel m(c);
    const LaneLayout layout(m);
    DrawList list;
    FrameBuilder(m, layout).build(viewportFor({0, 10000}, 1000), list);  // 10 ns per px
    EXPECT_EQ(list.eventsDrawn, 3u);
    std::vector<std::string> labels;
    for (const DrawText& t : list.texts)
        if (t.text == "first" || t.text == "second" || t.text == "third") labels.push_back(t.text);
    EXPECT_EQ(labels, (std::vector<std::string>{"first", "third"}));
}

// Back-to-back kernels must not read as one long bar: each wide event's
// first column is a darker edge. Kernels [1000, 2000) and [2000, 3000) at
// 10 ns per px: columns 100 and 200 are edges, 150 and 250 the fill.
TEST(FrameBuilder, BackToBackKernelsShowWhereOneEndsAndTheNextBegins) {
    auto c = std::make_shared<Capture>();
    Process p;
    p.rank = 0;
    Device& d = p.deviceById(0);
    guitest::addKernel(*c, d, 1000, 2000, 7, "a");
    guitest::addKernel(*c, d, 2000, 3000, 7, "b");
    c->processes.push_back(std::move(p));
    c->finalize();
    const TimelineModel m(c);
    const LaneLayout layout(m);
    DrawList list;
    FrameBuilder(m, layout).build(viewportFor({0, 10000}, 1000), list);
    // The colour on top at column x (later rectangles paint over earlier ones).
    auto colourAt = [&](float x) {
        uint32_t rgb = palette::kBackground;
        for (const DrawRect& r : list.rects)
            if (x >= r.x && x < r.x + r.w) rgb = r.rgb;
        return rgb;
    };
    EXPECT_EQ(colourAt(100.5f), palette::edge(palette::kCompute));
    EXPECT_EQ(colourAt(150.5f), palette::kCompute);
    EXPECT_EQ(colourAt(200.5f), palette::edge(palette::kCompute));
    EXPECT_EQ(colourAt(250.5f), palette::kCompute);
    EXPECT_NE(palette::edge(palette::kCompute), palette::kCompute);
}

// Zoomed out, a long event drawn over folded blocks and the blocks' count
// labels share one row: no two labels of the row may overlap.
TEST(FrameBuilder, LabelsOfARowNeverOverlap) {
    const auto c = denseCapture(200'000, 1'000'000);  // 4 ms of tiny kernels, one 50 us kernel
    const TimelineModel m(c);
    const LaneLayout layout(m);
    for (const ViewRange v : {ViewRange{0, 4'000'000}, ViewRange{900'000, 1'200'000}, ViewRange{990'000, 1'060'000}}) {
        DrawList list;
        FrameBuilder(m, layout).build(viewportFor(v, 1500), list);
        std::map<float, std::vector<std::pair<float, float>>> rows;  // by y
        bool big = false;
        for (const DrawText& t : list.texts) {
            rows[t.y].emplace_back(t.x, t.x + t.w);
            big |= t.text == "big_kernel";
        }
        // Zoomed in on it, the kernel's name wins over the fold count under it.
        if (v.start == 990'000) {
            EXPECT_TRUE(big);
        }
        for (auto& [y, spans] : rows) {
            std::sort(spans.begin(), spans.end());
            for (size_t i = 1; i < spans.size(); ++i)
                EXPECT_LE(spans[i - 1].second, spans[i].first) << "labels overlap at x " << spans[i].first;
        }
    }
}

TEST(FrameBuilder, AGpuWithoutCommunicationSaysSoOnItsOverlapLane) {
    const auto c = denseCapture(10, 1000);  // compute only
    const TimelineModel m(c);
    const LaneLayout layout(m);
    DrawList list;
    FrameBuilder(m, layout).build(viewportFor({0, 100'000}, 1000), list);
    bool said = false;
    for (const DrawText& t : list.texts) said |= t.text.rfind("no communication on this GPU", 0) == 0;
    EXPECT_TRUE(said);
}

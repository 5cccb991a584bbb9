// RowSummary (the per-row mipmap) and the zoomed-out rendering built on it,
// checked against brute force over the events on random rows.
#include "gui/model/lane_layout.h"
#include "gui/model/row_summary.h"
#include "gui/render/frame_builder.h"
#include "gui/render/palette.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace osc;
using namespace osc::gui;

namespace {

struct RandomRow {
    std::vector<TimeNs> start, end;
    std::vector<uint8_t> cat;
};

// Mostly short events with gaps, some long ones, some overlapping their neighbour.
RandomRow randomRow(unsigned seed, size_t n) {
    std::mt19937_64 rng(seed);
    RandomRow r;
    TimeNs t = 1000 + static_cast<TimeNs>(rng() % 5000);
    for (size_t i = 0; i < n; ++i) {
        const TimeNs dur =
            rng() % 50 == 0 ? 2000 + static_cast<TimeNs>(rng() % 200'000) : static_cast<TimeNs>(rng() % 300);
        r.start.push_back(t);
        r.end.push_back(t + dur);
        r.cat.push_back(static_cast<uint8_t>(rng() % 3));
        t += static_cast<TimeNs>(rng() % 400);
    }
    return r;
}

TimeNs clipped(TimeNs s, TimeNs e, TimeNs a, TimeNs b) { return std::max<TimeNs>(0, std::min(e, b) - std::max(s, a)); }

Viewport viewportFor(ViewRange r, double width) {
    Viewport vp;
    vp.scale = TimeScale(r, width);
    vp.clipBottom = 10000;
    return vp;
}

// Every cell of every level against the events, and the long events.
void expectBruteForce(const RandomRow& r, const RowSummary& s) {
    for (int level = 0; level < s.levels(); ++level) {
        const TimeNs w = s.bucketWidth(level);
        const auto& cells = s.cells(level);
        std::vector<uint32_t> longs;
        for (size_t k = 0; k < cells.size(); ++k) {
            const TimeNs a = s.origin() + static_cast<TimeNs>(k) * w, b = a + w;
            double busy[3] = {0, 0, 0};
            uint32_t count = 0;
            for (size_t i = 0; i < r.start.size(); ++i) {
                if (r.end[i] - r.start[i] >= 2 * w) continue;
                busy[r.cat[i]] += static_cast<double>(clipped(r.start[i], r.end[i], a, b));
                count += r.start[i] >= a && r.start[i] < b;
            }
            for (size_t c = 0; c < 3; ++c)
                EXPECT_NEAR(cells[k].busy[c], busy[c], 1e-4 * busy[c] + 1e-3) << level << " " << k;
            EXPECT_EQ(cells[k].count, count) << "level " << level << " bucket " << k;
        }
        for (size_t i = 0; i < r.start.size(); ++i) {
            if (r.end[i] - r.start[i] >= 2 * w) longs.push_back(static_cast<uint32_t>(i));
        }
        EXPECT_EQ(s.longEvents(level).index, longs) << "level " << level;
    }
}

}  // namespace

TEST(RowSummary, EveryCellEqualsBruteForceOverTheEvents) {
    for (unsigned seed = 1; seed <= 4; ++seed) {
        const RandomRow r = randomRow(seed, 3000);
        RowSummary s;
        s.build(r.start, r.end, r.cat);
        ASSERT_FALSE(s.empty());
        EXPECT_EQ(s.origin(), r.start.front());
        EXPECT_EQ(s.cells(s.levels() - 1).size(), 1u);
        expectBruteForce(r, s);
    }
}

TEST(RowSummary, RowsSpanningTheWholeTimeRangeStayFinite) {
    // Times may lie anywhere within +-2^62 ns (analyzer/capture/time_range.h);
    // 4 * span / n once wrapped to 0 here and asked for 2^62 buckets.
    constexpr TimeNs lim = (TimeNs{1} << 62) - 1;
    RandomRow one;  // one event over nearly the whole range
    one.start = {-lim};
    one.end = {lim};
    one.cat = {1};
    RandomRow far;  // short events at both ends and in the middle
    far.start = {-lim, -lim + 10, 0, lim - 100};
    far.end = {-lim + 5, -lim + 20, 1000, lim};
    far.cat = {0, 1, 2, 0};
    for (const RandomRow& r : {one, far}) {
        RowSummary s;
        s.build(r.start, r.end, r.cat);
        ASSERT_FALSE(s.empty());
        EXPECT_LE(s.bucketWidth(s.levels() - 1), RowSummary::kMaxWidth);
        EXPECT_LE(s.cells(s.levels() - 1).size(), 4u);  // 2^63 ns in buckets of 2^61
        size_t cells = 0;
        for (int level = 0; level < s.levels(); ++level) cells += s.cells(level).size();
        EXPECT_LE(cells, 64u);
        expectBruteForce(r, s);
        EXPECT_EQ(s.levelFor(1e30), s.levels() - 1);
    }
}

TEST(RowSummary, PicksTheLevelWhoseBucketsAreHalfAPixelToAPixel) {
    const RandomRow r = randomRow(7, 2000);
    RowSummary s;
    s.build(r.start, r.end, r.cat);
    const double base = static_cast<double>(s.bucketWidth(0));
    EXPECT_EQ(s.levelFor(base * 0.9), -1);  // finer than the base: draw events
    EXPECT_EQ(s.levelFor(base), 0);
    EXPECT_EQ(s.levelFor(base * 3.5), 1);
    EXPECT_EQ(s.levelFor(1e18), s.levels() - 1);  // never past the top level
}

// Renders one random stream lane zoomed out and compares every folded block's
// shade with the busy share of its pixels computed from the events, and the
// individually drawn events with the events long enough for that level.
TEST(SummaryRendering, BusySharePerPixelRunEqualsBruteForce) {
    for (unsigned seed = 11; seed <= 13; ++seed) {
        auto c = std::make_shared<Capture>();
        Process p;
        p.rank = 0;
        Device& d = p.deviceById(0);
        const RandomRow r = randomRow(seed, 20000);
        for (size_t i = 0; i < r.start.size(); ++i) guitest::addKernel(*c, d, r.start[i], r.end[i], 7, "k");
        c->processes.push_back(std::move(p));
        c->finalize();
        const TimelineModel m(c);
        const LaneLayout layout(m);
        const int laneIndex = m.groups()[0].lanes[1];
        const EventRow& row = m.lane(laneIndex).rows[0];
        const float y = static_cast<float>(layout.slotOf(laneIndex)->y) + 1;

        std::mt19937_64 rng(seed);
        for (int view = 0; view < 6; ++view) {
            const TimeNs span = (m.end() - m.begin()) / static_cast<TimeNs>(1 + rng() % 3);
            const TimeNs from =
                m.begin() + static_cast<TimeNs>(rng() % static_cast<uint64_t>(m.end() - m.begin() - span + 1));
            const double width = 200 + static_cast<double>(rng() % 400);
            const Viewport vp = viewportFor({from, from + span}, width);
            const int level = row.summary.levelFor(vp.scale.nsPerPx());
            ASSERT_GE(level, 0) << "the view must be zoomed out far enough for the summary";
            const TimeNs longNs = 2 * row.summary.bucketWidth(level);
            DrawList list;
            FrameBuilder(m, layout).build(vp, list);

            // Brute force: busy share of every pixel column from the short events.
            std::vector<double> colBusy(static_cast<size_t>(width), 0.0);
            size_t expectLong = 0, longRects = 0;
            for (size_t i = 0; i < row.size(); ++i) {
                if (row.end[i] - row.start[i] >= longNs) {
                    const double x0 = std::max(0.0, std::floor(vp.scale.toX(row.start[i])));
                    const double x1 = std::min(width, std::ceil(vp.scale.toX(row.end[i])));
                    if (row.end[i] > from && row.start[i] < from + span && x1 > x0) {
                        ++expectLong;
                        longRects += x1 - x0 >= 4 ? 2 : 1;  // with its darker left edge
                    }
                    continue;
                }
                for (size_t x = 0; x < colBusy.size(); ++x) {
                    const TimeNs a = vp.scale.toTime(static_cast<double>(x)), b = vp.scale.toTime(x + 1.0);
                    colBusy[x] +=
                        static_cast<double>(clipped(row.start[i], row.end[i], a, b)) / static_cast<double>(b - a);
                }
            }
            // The row's folded blocks come first, then its individually drawn
            // events (a full-share block has the event colour, so order tells them apart).
            std::vector<DrawRect> rowRects;
            for (const DrawRect& rect : list.rects) {
                if (rect.y == y) rowRects.push_back(rect);
            }
            ASSERT_EQ(list.eventsDrawn, expectLong);
            ASSERT_GE(rowRects.size(), longRects);
            rowRects.resize(rowRects.size() - longRects);
            double drawnBusy = 0, truthBusy = 0;
            for (const DrawRect& rect : rowRects) {
                int shade = 0;
                for (int l = 1; l <= 4; ++l) {
                    if (rect.rgb == palette::shaded(palette::kCompute, l / 4.0)) shade = l;
                }
                ASSERT_GT(shade, 0) << "a folded block has one of the four shades";
                double truth = 0;
                for (int x = static_cast<int>(rect.x); x < static_cast<int>(rect.x + rect.w); ++x)
                    truth += std::min(1.0, colBusy[static_cast<size_t>(x)]);
                // Quantised to quarters (±1/8 per pixel); block edges follow bucket
                // edges rounded to the pixel (±1 px at each end).
                EXPECT_NEAR(shade / 4.0 * rect.w, truth, 0.125 * rect.w + 2.0) << "block at x " << rect.x;
                drawnBusy += shade / 4.0 * rect.w;
            }
            for (double b : colBusy) truthBusy += std::min(1.0, b);
            EXPECT_NEAR(drawnBusy, truthBusy, 0.15 * width + 4) << "seed " << seed << " view " << view;
        }
    }
}

// Many communication intervals on screen switch the overlap lane to prefix
// sums; its column heights must still be the exact covered share per column.
TEST(SummaryRendering, OverlapLaneFromPrefixSumsMatchesBruteForce) {
    auto c = std::make_shared<Capture>();
    Process p;
    p.rank = 0;
    Device& d = p.deviceById(0);
    std::mt19937_64 rng(5);
    for (TimeNs t = 0; t < 2'000'000; t += 500) {
        guitest::addKernel(*c, d, t, t + static_cast<TimeNs>(rng() % 400), 7, "gemm");
        const TimeNs m0 = t + static_cast<TimeNs>(rng() % 250);
        guitest::addKernel(*c, d, m0, m0 + static_cast<TimeNs>(rng() % 250), 13, guitest::kAllReduce);
    }
    c->processes.push_back(std::move(p));
    c->finalize();
    const TimelineModel m(c);
    const LaneLayout layout(m);
    const LaneSlot* slot = layout.slotOf(m.groups()[0].lanes[0]);
    ASSERT_EQ(m.lane(slot->lane).kind, LaneKind::Overlap);
    const double width = 400;  // 4000 intervals per set on 400 columns
    const Viewport vp = viewportFor({0, 2'000'000}, width);
    DrawList list;
    FrameBuilder(m, layout).build(vp, list);
    const float inner = static_cast<float>(slot->height) - 2;
    std::vector<float> drawnO(static_cast<size_t>(width), 0), drawnX(static_cast<size_t>(width), 0);
    for (const DrawRect& r : list.rects) {
        if (r.y < static_cast<float>(slot->y) || r.y >= static_cast<float>(slot->y + slot->height)) continue;
        for (int x = static_cast<int>(r.x); x < static_cast<int>(r.x + r.w); ++x)
            (r.rgb == palette::kOverlap ? drawnO : drawnX)[static_cast<size_t>(x)] = r.h;
    }
    const DeviceCoverage& cov = m.groups()[0].coverage;
    for (size_t x = 0; x < drawnO.size(); ++x) {
        const TimeNs a = vp.scale.toTime(static_cast<double>(x)), b = vp.scale.toTime(x + 1.0);
        const double len = static_cast<double>(b - a);
        const double o = static_cast<double>(lengthWithin(cov.overlap.intervals(), {a, b})) / len;
        const double e = static_cast<double>(lengthWithin(cov.exposedComm.intervals(), {a, b})) / len;
        const auto height = [&](double share) {
            const int px = static_cast<int>(std::lround(share * inner));
            return static_cast<float>(share > 0 && px == 0 ? 1 : px);
        };
        EXPECT_EQ(drawnO[x], height(o)) << "column " << x;
        EXPECT_EQ(drawnX[x], height(e)) << "column " << x;
    }
}

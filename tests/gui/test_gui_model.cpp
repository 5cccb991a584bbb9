// Model-layer tests: time scale, ticks, coverage algebra, rows, lanes, range
// metrics and find, checked against hand-worked numbers and brute force.
#include "analyzer/crossrank/analyze.h"
#include "gui/model/event_details.h"
#include "gui/model/kernel_find.h"
#include "gui/model/lane_layout.h"
#include "gui/model/markers.h"
#include "gui/model/range_metrics.h"
#include "gui/model/saved_layout.h"
#include "gui/model/step_navigation.h"
#include "gui/model/time_scale.h"
#include "gui/model/time_ticks.h"
#include "gui/model/timeline_model.h"
#include "gui/model/view_history.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace osc;
using namespace osc::gui;

TEST(TimeScale, MapsTimeToPixelsAndBack) {
    const TimeScale s({1000, 2000}, 100);  // 10 ns per pixel
    EXPECT_DOUBLE_EQ(s.toX(1000), 0);
    EXPECT_DOUBLE_EQ(s.toX(1500), 50);
    EXPECT_DOUBLE_EQ(s.toX(2000), 100);
    EXPECT_EQ(s.toTime(25), 1250);
    EXPECT_DOUBLE_EQ(s.nsPerPx(), 10);
}

TEST(TimeScale, ZoomKeepsTheAnchorTimeUnderTheCursor) {
    const TimeScale s({0, 10000}, 1000);
    const TimeScale z = s.zoomedAt(250, 0.5);  // t = 2500 stays at x = 250
    EXPECT_EQ(z.range().length(), 5000);
    EXPECT_EQ(z.range().start, 2500 - 1250);
    EXPECT_NEAR(z.toX(2500), 250, 1e-9);
    const TimeScale out = z.zoomedAt(250, 2.0);
    EXPECT_EQ(out.range(), (ViewRange{0, 10000}));
}

TEST(TimeScale, PanMovesByPixelsAndNeverCollapses) {
    const TimeScale s({0, 10000}, 1000);
    EXPECT_EQ(s.pannedBy(100).range(), (ViewRange{1000, 11000}));
    EXPECT_EQ(s.pannedBy(-50).range(), (ViewRange{-500, 9500}));
    EXPECT_EQ(TimeScale({5, 5}, 100).range().length(), TimeScale::kMinSpanNs);
    EXPECT_EQ(s.zoomedAt(0, 1e-9).range().length(), TimeScale::kMinSpanNs);
}

TEST(TimeScale, ClampKeepsTheViewInsideTheBounds) {
    EXPECT_EQ(TimeScale({-500, 500}, 100).clampedTo({0, 10000}).range(), (ViewRange{0, 1000}));
    EXPECT_EQ(TimeScale({9500, 10500}, 100).clampedTo({0, 10000}).range(), (ViewRange{9000, 10000}));
    EXPECT_EQ(TimeScale({0, 20000}, 100).clampedTo({0, 10000}).range(), (ViewRange{-5000, 15000}));
}

TEST(TimeTicks, NiceStepsFollowOneTwoFive) {
    EXPECT_EQ(niceTickStep(1.0, 90), 100);    // 90 ns -> 100
    EXPECT_EQ(niceTickStep(1.0, 150), 200);   // 150 -> 200
    EXPECT_EQ(niceTickStep(1.0, 300), 500);   // 300 -> 500
    EXPECT_EQ(niceTickStep(1.0, 600), 1000);  // 600 -> 1000
    EXPECT_EQ(niceTickStep(0.001, 90), 1);    // never below 1 ns
    EXPECT_EQ(niceTickStep(1e6, 90), 100'000'000);
}

TEST(TimeTicks, TicksAreAtMultiplesInsideTheView) {
    const TimeScale s({1050, 2050}, 1000);  // 1 ns per pixel, step 100 at 90 px
    const auto ticks = makeTicks(s, 90);
    ASSERT_EQ(ticks.size(), 10u);
    EXPECT_EQ(ticks.front().time, 1100);
    EXPECT_EQ(ticks.back().time, 2000);
    EXPECT_DOUBLE_EQ(ticks.front().x, 50);
    EXPECT_EQ(ticks.front().label, "1.1 µs");
}

TEST(TimeTicks, LabelsUseUnitsAndEnoughDecimals) {
    EXPECT_EQ(formatTickLabel(12'340'000, 10'000), "12.34 ms");
    EXPECT_EQ(formatTickLabel(3'000'000'000, 1'000'000'000), "3 s");
    EXPECT_EQ(formatTickLabel(500, 100), "500 ns");
    EXPECT_EQ(formatTickLabel(0, 1000), "0 µs");
    EXPECT_EQ(formatDuration(850), "850 ns");
    EXPECT_EQ(formatDuration(12'500), "12.5 µs");
    EXPECT_EQ(formatDuration(3'250'000), "3.25 ms");
    EXPECT_EQ(formatDuration(125'000'000'000), "125 s");
    EXPECT_EQ(formatDuration(77'715'000, 4), "77.72 ms");
    EXPECT_EQ(formatDuration(77'700'000, 4), "77.7 ms");
    // Timestamps to the microsecond, so two steps never print alike.
    EXPECT_EQ(formatTimestamp(1'321'457'000), "1.321457 s");
    EXPECT_EQ(formatTimestamp(1'400'000'000), "1.400000 s");
    EXPECT_EQ(formatTimestamp(12'345'678), "12.346 ms");
    EXPECT_EQ(formatTimestamp(850), "850 ns");
    EXPECT_EQ(formatBytes(512), "512 B");
    EXPECT_EQ(formatBytes(4096), "4 KiB");
    EXPECT_EQ(formatBytes(25ull << 20), "25 MiB");
    EXPECT_EQ(formatBytes(26'738'688), "25.5 MiB");
    EXPECT_EQ(formatBytes(3ull << 30), "3 GiB");
    EXPECT_EQ(formatPercent(0.614), "61.4 %");
    EXPECT_EQ(formatPercent(0.0), "0.0 %");
    EXPECT_EQ(formatPercent(1.0), "100.0 %");
}

TEST(TimeTicks, RulerLabelsBecomeRelativeWhenAbsoluteOnesGetLong) {
    // 1 us on 1000 px around 1.3214571 s: 100 ns steps would print
    // "1.3214571 s"; instead the origin is said once and ticks count from it.
    const Ruler r = makeRuler(TimeScale({1'321'457'050, 1'321'458'050}, 1000));
    ASSERT_GE(r.ticks.size(), 3u);
    EXPECT_EQ(r.origin, "1.3214571 s");
    EXPECT_EQ(r.ticks[0].time, 1'321'457'100);
    EXPECT_EQ(r.ticks[0].label, "+0");
    EXPECT_EQ(r.ticks[1].label, "+100 ns");
    EXPECT_EQ(r.ticks[2].label, "+200 ns");
    // Short absolute labels stay absolute.
    const Ruler a = makeRuler(TimeScale({0, 10'000'000}, 1000));
    EXPECT_TRUE(a.origin.empty());
    EXPECT_EQ(a.ticks[1].label, "1 ms");
}

TEST(TimeTicks, ParsesDurationsWithUnits) {
    EXPECT_EQ(parseDuration("1500"), 1500);
    EXPECT_EQ(parseDuration("12.5us"), 12'500);
    EXPECT_EQ(parseDuration("12.5µs"), 12'500);
    EXPECT_EQ(parseDuration("3ms"), 3'000'000);
    EXPECT_EQ(parseDuration("1.2s"), 1'200'000'000);
    EXPECT_EQ(parseDuration("20ns"), 20);
    EXPECT_FALSE(parseDuration("abc"));
    EXPECT_FALSE(parseDuration("ms"));
}

TEST(EventRow, GallopAndHitTest) {
    EventRow row;
    for (TimeNs t = 0; t < 1000; t += 10) row.add(t, t + 5, static_cast<uint32_t>(t / 10), 0, EventSource::Kernel);
    row.finish();
    for (TimeNs t : {-5, 0, 3, 10, 11, 555, 990, 995, 2000}) {
        size_t expect = 0;
        while (expect < row.size() && row.start[expect] < t) ++expect;
        EXPECT_EQ(row.gallopToStart(0, t), expect) << t;
        EXPECT_EQ(row.gallopToStart(std::min<size_t>(expect, 3), t), expect) << t;
    }
    EXPECT_EQ(row.firstEndingAfter(14), 1u);  // [10, 15) is still running at 14
    EXPECT_EQ(row.firstEndingAfter(15), 2u);
    EXPECT_EQ(row.durationSum(2, 5), 15);
    EXPECT_EQ(row.hitTest(12, 0), 1u);
    EXPECT_EQ(row.hitTest(17, 0), row.size());  // in a gap
    EXPECT_EQ(row.hitTest(18, 3), 2u);          // 2 ns from [20, 25), 4 from [10, 15)
}

// The helper columns are kept only where needed (no prefix maximum when ends
// ascend, duration sums every kDurationBlock events): against brute force on
// rows that overlap and rows that do not, across block boundaries.
TEST(EventRow, HelperColumnsMatchBruteForce) {
    std::mt19937 rng(7);
    for (const bool overlapping : {false, true}) {
        for (const size_t n : {size_t{0}, size_t{1}, EventRow::kDurationBlock - 1, EventRow::kDurationBlock,
                               EventRow::kDurationBlock + 1, 3 * EventRow::kDurationBlock + 17}) {
            EventRow row;
            TimeNs t = 0;
            for (size_t i = 0; i < n; ++i) {
                t += 1 + static_cast<TimeNs>(rng() % 50);
                const TimeNs dur = overlapping ? static_cast<TimeNs>(rng() % 400) : static_cast<TimeNs>(rng() % 2);
                row.add(t, t + dur, static_cast<uint32_t>(i), 0, EventSource::Kernel);
            }
            row.finish();
            TimeNs maxEnd = INT64_MIN;
            for (size_t i = 0; i < n; ++i) {
                maxEnd = std::max(maxEnd, row.end[i]);
                ASSERT_EQ(row.endMaxAt(i), maxEnd) << n << " " << i;
            }
            EXPECT_EQ(row.lastEnd(), maxEnd);
            for (TimeNs q = -1; q <= t + 500; q += 7) {
                size_t expect = 0;
                while (expect < n) {
                    TimeNs m = INT64_MIN;
                    for (size_t k = 0; k <= expect; ++k) m = std::max(m, row.end[k]);
                    if (m > q) break;
                    ++expect;
                }
                ASSERT_EQ(row.firstEndingAfter(q), expect) << n << " " << q;
            }
            for (size_t i = 0; i <= n; i += 1 + i / 5)
                for (size_t j = i; j <= n; ++j) {
                    TimeNs sum = 0;
                    for (size_t k = i; k < j; ++k) sum += row.end[k] - row.start[k];
                    ASSERT_EQ(row.durationSum(i, j), sum) << n << " [" << i << ", " << j << ")";
                }
        }
    }
}

// A stream counts as communication through NCCL kernels, --comm-kernel
// matches, peer copies or (--comm-copies) host<->device copies; only the
// first is called NCCL.
TEST(TimelineModel, CommunicationLanesAreNamedByWhatCarriedTheirCommunication) {
    auto c = std::make_shared<Capture>();
    Process p;
    p.host = "node";
    p.pid = 1;
    p.rank = 0;
    Device& d = p.deviceById(0);
    guitest::addKernel(*c, d, 0, 1000, 1, guitest::kAllReduce);
    guitest::addKernel(*c, d, 0, 1000, 2, "my_allreduce_kernel");
    guitest::addCopy(d, 0, 1000, 3, CopyKind::PtoP, 4096);
    guitest::addCopy(d, 0, 1000, 4, CopyKind::HtoD, 4096);
    guitest::addCopy(d, 0, 100, 5, CopyKind::HtoD, 4096);          // mostly NCCL:
    guitest::addKernel(*c, d, 100, 1000, 5, guitest::kAllReduce);  // still NCCL
    c->processes.push_back(std::move(p));
    c->finalize();
    AnalysisSettings settings;
    settings.commCopies = true;
    settings.commKernelPatterns = {"my_allreduce"};
    const TimelineModel m(c, settings);
    std::map<uint32_t, std::string> labels;
    for (int lane : m.groups()[0].lanes)
        if (m.lane(lane).kind == LaneKind::Stream) labels[m.lane(lane).stream] = m.lane(lane).label;
    EXPECT_EQ(labels[1], "stream 1 · NCCL AllReduce");
    EXPECT_EQ(labels[2], "stream 2 · communication kernels");
    EXPECT_EQ(labels[3], "stream 3 · peer copies");
    EXPECT_EQ(labels[4], "stream 4 · copies as communication");
    EXPECT_EQ(labels[5], "stream 5 · NCCL AllReduce");
    // Without --comm-copies the host copies are memory again.
    const TimelineModel plain(c);
    for (int lane : plain.groups()[0].lanes) {
        if (plain.lane(lane).kind == LaneKind::Stream && plain.lane(lane).stream == 4) {
            EXPECT_EQ(plain.lane(lane).label, "stream 4 · memory");
        }
    }
}

TEST(TimelineModel, BuildsLanesPerStreamWithLabelsAndCategories) {
    const TimelineModel m(guitest::smallCapture());
    ASSERT_EQ(m.groups().size(), 1u);
    const DeviceGroup& g = m.groups()[0];
    EXPECT_EQ(g.label, "rank 0 (node:100) · GPU 0");
    // Ranges, overlap, then streams 7, 13, 20.
    ASSERT_EQ(g.lanes.size(), 5u);
    EXPECT_EQ(m.lane(g.lanes[0]).kind, LaneKind::Ranges);
    EXPECT_EQ(m.lane(g.lanes[1]).kind, LaneKind::Overlap);
    EXPECT_EQ(m.lane(g.lanes[2]).label, "stream 7 · compute");
    EXPECT_EQ(m.lane(g.lanes[3]).label, "stream 13 · NCCL AllReduce");
    EXPECT_EQ(m.lane(g.lanes[3]).mainCategory, Category::Communication);
    EXPECT_EQ(m.lane(g.lanes[4]).label, "stream 20 · memory");
    EXPECT_EQ(g.coverage.compute.total(), 6000);
    EXPECT_EQ(g.coverage.comm.total(), 3000);
    EXPECT_EQ(g.coverage.overlap.total(), 2000);
    EXPECT_EQ(g.coverage.exposedComm.total(), 1000);
    EXPECT_EQ(g.coverage.exposedComm.intervals().at(0).start, 5000);
    EXPECT_EQ(g.coverage.busy.total(), 400 + 7000);
    EXPECT_EQ(m.begin(), 0);
    EXPECT_EQ(m.end(), 9000);
}

TEST(TimelineModel, CollapseHideAndReorder) {
    TimelineModel m(guitest::smallCapture(2));
    ASSERT_EQ(m.groups().size(), 2u);
    EXPECT_EQ(m.visibleLanes().size(), 10u);
    m.setCollapsed(0, true);
    EXPECT_EQ(m.visibleLanes().size(), 6u);  // group 0 keeps its overlap lane only
    const int stream7 = m.groups()[1].lanes[2];
    m.setHidden(stream7, true);
    EXPECT_EQ(m.visibleLanes().size(), 5u);
    m.showAllLanes();
    m.moveLane(stream7, -2);
    EXPECT_EQ(m.groups()[1].lanes[0], stream7);
    m.moveLane(stream7, -5);  // clamped at the top
    EXPECT_EQ(m.groups()[1].lanes[0], stream7);

    const LaneLayout layout(m);
    const LaneSlot* s = layout.slotOf(stream7);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(layout.laneAt(s->y + 1)->lane, stream7);
    EXPECT_EQ(layout.groupHeaderAt(layout.groups()[0].y + 2), 0);
}

TEST(TimelineModel, MatchesTheSameCollectiveOnOtherRanks) {
    const TimelineModel m(guitest::smallCapture(3, 300));
    const EventRef ncclOnRank0 = m.findKernel(0, 1);  // kernel row 1 is the AllReduce
    ASSERT_TRUE(ncclOnRank0.valid());
    const auto others = m.matchingCollectives(ncclOnRank0);
    ASSERT_EQ(others.size(), 2u);
    const auto& row = m.lane(others[1].lane).rows[0];
    EXPECT_EQ(row.start[others[1].index], 4000 + 600);
    EXPECT_TRUE(m.matchingCollectives(m.findKernel(0, 0)).empty());  // a gemm matches nothing

    const DetailList d = eventDetails(m, ncclOnRank0);
    auto value = [&](const std::string& k) {
        for (const auto& [key, v] : d)
            if (key == k) return v;
        return std::string("<missing>");
    };
    EXPECT_EQ(value("kernel"), guitest::kAllReduce);
    EXPECT_EQ(value("collective"), "AllReduce");
    EXPECT_EQ(value("duration"), "3 µs");
    EXPECT_EQ(value("arrival skew"), "600 ns");
}

TEST(RangeMetrics, HandWorkedWindow) {
    const TimelineModel m(guitest::smallCapture());
    const OverlapMetrics r = rangeMetrics(m.groups()[0], 3000, 8000);
    EXPECT_EQ(r.window_ns, 5000);
    EXPECT_EQ(r.compute_ns, 4000);
    EXPECT_EQ(r.comm_ns, 3000);
    EXPECT_EQ(r.overlap_ns, 2000);
    EXPECT_EQ(r.exposed_comm_ns, 1000);
    EXPECT_EQ(r.busy_ns, 5000);
    EXPECT_EQ(r.idle_ns, 0);
    EXPECT_DOUBLE_EQ(*r.overlap_ratio, 2.0 / 3.0);
    EXPECT_DOUBLE_EQ(*r.achieved_speedup, 7000.0 / 5000.0);
    EXPECT_DOUBLE_EQ(*r.ideal_speedup, 7000.0 / 4000.0);
    EXPECT_FALSE(rangeMetrics(m.groups()[0], 100, 400).overlap_ratio.has_value());
}

TEST(RangeMetrics, SumOverDevicesNearTheTimeLimitsSaturatesAndKeepsTheRatios) {
    // Times may lie anywhere within +-2^62 ns (analyzer/capture/time_range.h).
    // Three devices, each with compute over [-2^61, 2^61) (2^62 ns) and an
    // all-reduce over [-2^61, 2^61 - 2): per device every length fits, but
    // their sums over three devices and compute + comm do not.
    constexpr TimeNs h = TimeNs{1} << 61, q = TimeNs{1} << 62;
    auto c = std::make_shared<Capture>();
    for (int r = 0; r < 3; ++r) {
        Process p;
        p.rank = r;
        p.pid = 100 + r;
        Device& d = p.deviceById(0);
        guitest::addKernel(*c, d, -h, h, 7, "void gemm()");
        guitest::addKernel(*c, d, -h, h - 2, 13, guitest::kAllReduce);
        c->processes.push_back(std::move(p));
    }
    c->finalize();
    const TimelineModel m(c);
    ASSERT_EQ(m.groups().size(), 3u);
    const OverlapMetrics one = rangeMetrics(m.groups()[0], -h, h);
    EXPECT_EQ(one.window_ns, q);
    EXPECT_EQ(one.compute_ns, q);
    EXPECT_EQ(one.comm_ns, q - 2);
    EXPECT_EQ(one.overlap_ns, q - 2);

    const SelectionMetrics sel = selectionMetrics(m, {0, 1, 2}, -h, h);
    ASSERT_EQ(sel.perDevice.size(), 3u);
    EXPECT_EQ(sel.sum.window_ns, INT64_MAX);  // 3 * 2^62 does not fit
    EXPECT_EQ(sel.sum.compute_ns, INT64_MAX);
    EXPECT_EQ(sel.sum.comm_ns, INT64_MAX);
    EXPECT_EQ(sel.sum.overlap_ns, INT64_MAX);
    EXPECT_EQ(sel.sum.exposed_comm_ns, 0);
    EXPECT_EQ(sel.sum.idle_ns, 0);
    // The ratios as the report's summary takes them (MetricSum): from the
    // saturated sums, |C ∪ M| summed per device. Here overlap = comm and
    // C ∪ M = C, so they are those of one device (to double precision).
    ASSERT_TRUE(sel.sum.overlap_ratio && sel.sum.achieved_speedup && sel.sum.ideal_speedup);
    EXPECT_DOUBLE_EQ(*sel.sum.overlap_ratio, 1.0);
    EXPECT_DOUBLE_EQ(*sel.sum.achieved_speedup, (2.0 * q - 2) / q);
    EXPECT_DOUBLE_EQ(*sel.sum.ideal_speedup, (2.0 * q - 2) / q);
    // Two devices: the ns sums still fit (2^63 - 4 for comm), compute + comm
    // (2^64 - 4) does not.
    const SelectionMetrics two = selectionMetrics(m, {0, 1}, -h, h);
    EXPECT_EQ(two.sum.comm_ns, 2 * (q - 2));
    EXPECT_EQ(two.sum.compute_ns, INT64_MAX);  // 2^63
    ASSERT_TRUE(two.sum.achieved_speedup.has_value());
    EXPECT_DOUBLE_EQ(*two.sum.achieved_speedup, (2.0 * q - 2) / q);
}

TEST(RangeMetrics, MatchBruteForceOnRandomWindows) {
    // Random kernels on three streams; per-ns classification as the oracle.
    auto c = std::make_shared<Capture>();
    Process p;
    p.rank = 0;
    Device& d = p.deviceById(0);
    std::mt19937 rng(3);
    std::uniform_int_distribution<TimeNs> st(0, 3000), len(1, 120);
    std::vector<std::pair<TimeNs, TimeNs>> comp, comm;
    for (int i = 0; i < 150; ++i) {
        const TimeNs s = st(rng), e = s + len(rng);
        const bool isComm = i % 3 == 0;
        guitest::addKernel(*c, d, s, e, isComm ? 13 : 7 + i % 2, isComm ? guitest::kAllReduce : "void gemm()");
        (isComm ? comm : comp).push_back({s, e});
    }
    c->processes.push_back(std::move(p));
    c->finalize();
    const TimelineModel m(c);
    std::vector<uint8_t> C(3200), M(3200);
    for (auto [s, e] : comp)
        for (TimeNs t = s; t < e; ++t) C[static_cast<size_t>(t)] = 1;
    for (auto [s, e] : comm)
        for (TimeNs t = s; t < e; ++t) M[static_cast<size_t>(t)] = 1;
    std::uniform_int_distribution<TimeNs> w(0, 3200);
    for (int k = 0; k < 100; ++k) {
        TimeNs a = w(rng), b = w(rng);
        if (a > b) std::swap(a, b);
        TimeNs cn = 0, mn = 0, on = 0, bn = 0;
        for (TimeNs t = a; t < b; ++t) {
            const auto i = static_cast<size_t>(t);
            cn += C[i];
            mn += M[i];
            on += C[i] && M[i];
            bn += C[i] || M[i];
        }
        const OverlapMetrics r = rangeMetrics(m.groups()[0], a, b);
        ASSERT_EQ(r.compute_ns, cn);
        ASSERT_EQ(r.comm_ns, mn);
        ASSERT_EQ(r.overlap_ns, on);
        ASSERT_EQ(r.exposed_comm_ns, mn - on);
        ASSERT_EQ(r.busy_ns, bn);
        ASSERT_EQ(r.idle_ns, (b - a) - bn);
    }
}

TEST(KernelFind, CountsAndDurationStatistics) {
    const TimelineModel m(guitest::smallCapture(2, 100));
    const FindResult r = findKernels(m, {"GEMM", std::nullopt});
    EXPECT_EQ(r.count, 4u);
    EXPECT_EQ(r.total_ns, 2 * (4000 + 2000));
    EXPECT_EQ(r.min_ns, 2000);
    EXPECT_EQ(r.median_ns, 2000);  // lower median of {2000, 2000, 4000, 4000}
    EXPECT_EQ(r.max_ns, 4000);
    ASSERT_EQ(r.hits.size(), 4u);
    // Time order across ranks: 1000 (r0), 1100 (r1), 6000 (r0), 6100 (r1).
    std::vector<TimeNs> starts;
    for (const auto& h : r.hits) starts.push_back(m.lane(h.lane).rows[0].start[h.index]);
    EXPECT_EQ(starts, (std::vector<TimeNs>{1000, 1100, 6000, 6100}));
    const FindResult ranged = findKernels(m, {"gemm", ViewRange{0, 5000}});
    EXPECT_EQ(ranged.count, 2u);
    EXPECT_EQ(findKernels(m, {"nothing-like-this", std::nullopt}).count, 0u);
}

TEST(KernelFind, VisibleHitsAreOnePerColumnAndCoverEveryColumnWithAHit) {
    EventRow row;
    std::mt19937 rng(11);
    std::uniform_int_distribution<TimeNs> gap(0, 40), len(1, 300);
    TimeNs t = 0;
    for (uint32_t i = 0; i < 20000; ++i) {
        t += gap(rng);
        row.add(t, t + len(rng), i, 0, EventSource::Kernel);
    }
    row.finish();
    std::vector<uint32_t> hits;
    for (uint32_t i = 0; i < row.size(); ++i)
        if (rng() % 3 == 0) hits.push_back(i);
    for (const ViewRange v : {ViewRange{0, 500'000}, ViewRange{100'003, 101'777}, ViewRange{50'000, 50'100}}) {
        const TimeScale s(v, 800);
        const auto shown = visibleHits(row, hits, s);
        std::set<long> columns;
        for (uint32_t i : shown) {
            EXPECT_TRUE(row.end[i] > v.start && row.start[i] < v.end) << i;
            EXPECT_TRUE(columns.insert(static_cast<long>(std::floor(std::max(0.0, s.toX(row.start[i]))))).second) << i;
        }
        for (uint32_t i : hits) {
            if (row.start[i] >= v.start && row.start[i] < v.end) {
                EXPECT_TRUE(columns.count(static_cast<long>(std::floor(s.toX(row.start[i]))))) << i;
            }
        }
        EXPECT_LE(shown.size(), 800u);
    }
}

TEST(ViewLimits, ClampsIntoTheBoundsAndAboveTheFloor) {
    const ViewLimits l = ViewLimits::forContent(1000, 11000, 0.02);  // bounds [800, 11200)
    EXPECT_EQ(l.bounds, (ViewRange{800, 11200}));
    EXPECT_EQ(l.clamp({0, 1000}), (ViewRange{800, 1800}));
    EXPECT_EQ(l.clamp({11000, 12000}), (ViewRange{10200, 11200}));
    EXPECT_EQ(l.clamp({-5, 50000}), l.bounds);
    EXPECT_EQ(l.clamp({5000, 5010}), (ViewRange{4955, 5055}));
    EXPECT_EQ(l.clamp({5000, 6000}), (ViewRange{5000, 6000}));
    // A capture shorter than the floor is shown whole.
    const ViewLimits tiny = ViewLimits::forContent(0, 20, 0.02);
    EXPECT_EQ(tiny.clamp({5, 6}), tiny.bounds);
}

TEST(ViewHistory, PopsInReverseOrder) {
    ViewHistory h;
    h.push({0, 10});
    h.push({0, 10});  // duplicates collapse
    h.push({5, 6});
    EXPECT_EQ(h.pop(), (ViewRange{5, 6}));
    EXPECT_EQ(h.pop(), (ViewRange{0, 10}));
    EXPECT_FALSE(h.pop());
}

TEST(TimelineModel, AnalysisAddsExposedWaitingLastArrivalsAndDetails) {
    // Rank 1 starts everything 1.5 us later: rank 0's AllReduce [4000, 7000)
    // waits for rank 1's [5500, 8500) until 5500; its gemm covers up to 5000,
    // so [5000, 5500) is exposed waiting and [5500, 7000) transfer.
    auto capture = guitest::smallCapture(2, 1500);
    TimelineModel m(capture);
    const Analysis a = analyze(*capture);
    m.addStepLanes(a);
    m.annotate(a);
    EXPECT_EQ(m.groups()[0].exposedWait.intervals(), (IntervalSet{{5000, 5500}}));
    EXPECT_TRUE(m.groups()[1].exposedWait.intervals().empty());
    EXPECT_NE(m.groups()[1].label.find("last at 1 of 1 collectives"), std::string::npos) << m.groups()[1].label;
    EXPECT_EQ(m.groups()[0].label.find("last at"), std::string::npos);

    auto valueOf = [](const DetailList& d, const std::string& k) {
        for (const auto& [key, v] : d)
            if (key == k) return v;
        return std::string("<missing>");
    };
    const DetailList nccl = eventDetails(m, m.findKernel(0, 1), &a);
    EXPECT_EQ(valueOf(nccl, "waiting for last rank"), formatDuration(1500));
    EXPECT_EQ(valueOf(nccl, "transfer"), formatDuration(1500));
    EXPECT_EQ(valueOf(nccl, "last to arrive"), "rank 1 · GPU 0");
    // The second gemm [6000, 8000) runs entirely under communication; no
    // gemm ran alone, so there is no baseline to compare with.
    const DetailList gemm = eventDetails(m, m.findKernel(0, 2), &a);
    EXPECT_EQ(valueOf(gemm, "under communication"), formatDuration(1000) + " of " + formatDuration(2000));
    EXPECT_EQ(valueOf(gemm, "alone (baseline)"), "not measured: ran alone 0 times, needs 3");
    // Without the analysis none of this is shown.
    EXPECT_EQ(valueOf(eventDetails(m, m.findKernel(0, 1)), "transfer"), "<missing>");
}

TEST(Markers, SortedNamedByPositionAndRemovedNearTheClick) {
    Markers m;
    EXPECT_EQ(m.add(3'500'000), 0u);
    EXPECT_EQ(m.add(1'000'000), 0u);  // before the first: it becomes M1
    EXPECT_EQ(m.add(3'500'000), 1u);  // none twice at one time
    EXPECT_EQ(m.times(), (std::vector<TimeNs>{1'000'000, 3'500'000}));
    // M2 is 2.5 ms after M1: the distance two markers measure.
    EXPECT_EQ(m.label(1), "M2 3.500 ms (+2.5 ms)");
    EXPECT_EQ(m.label(0), "M1 1.000 ms");
    EXPECT_FALSE(m.nearest(2'000'000, 100'000));
    EXPECT_EQ(m.nearest(3'450'000, 100'000), 1u);
    EXPECT_FALSE(m.removeNear(2'000'000, 100'000));
    EXPECT_TRUE(m.removeNear(1'020'000, 100'000));
    EXPECT_EQ(m.times(), (std::vector<TimeNs>{3'500'000}));
    EXPECT_EQ(Markers::name(0), "M1");
}

namespace {

DeviceAnalysis deviceWithSteps(std::vector<std::pair<TimeNs, TimeNs>> windows, const std::string& name = "step") {
    DeviceAnalysis d;
    for (size_t i = 0; i < windows.size(); ++i) {
        StepAnalysis s;
        s.name = name + " " + std::to_string(i + 1);
        s.start_ns = windows[i].first;
        s.end_ns = windows[i].second;
        d.steps.push_back(s);
    }
    return d;
}

}  // namespace

TEST(StepNavigation, AJobStepSpansEveryDeviceAndBracketsWalkThemInOrder) {
    // Two ranks; rank 1 starts each step a little later and ends step 1 later.
    Analysis a;
    a.devices.push_back(deviceWithSteps({{100, 200}, {300, 400}}));
    a.devices.push_back(deviceWithSteps({{110, 230}, {320, 390}}));
    const std::vector<JobStep> steps = jobSteps(a);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0].window, (ViewRange{100, 230}));
    EXPECT_EQ(steps[1].window, (ViewRange{300, 400}));
    EXPECT_EQ(steps[0].devices, 2);
    EXPECT_EQ(stepsSpan(steps), (ViewRange{100, 400}));
    EXPECT_FALSE(stepsSpan({}));
    EXPECT_EQ(withMargin({100, 400}, 0.1), (ViewRange{70, 430}));
    // Before all steps, ] goes to the first and [ nowhere.
    EXPECT_EQ(neighbourStep(steps, 50, +1), 0);
    EXPECT_EQ(neighbourStep(steps, 50, -1), -1);
    // Inside step 1: ] step 2; inside step 2: [ step 1 and ] nowhere.
    EXPECT_EQ(neighbourStep(steps, 150, +1), 1);
    EXPECT_EQ(neighbourStep(steps, 350, +1), -1);
    EXPECT_EQ(neighbourStep(steps, 350, -1), 0);
    // Between them: [ the one before, ] the one after.
    EXPECT_EQ(neighbourStep(steps, 260, -1), 0);
    EXPECT_EQ(neighbourStep(steps, 260, +1), 1);
    EXPECT_EQ(neighbourStep({}, 260, +1), -1);
}

TEST(StepNavigation, OverlappingWindowsDoNotTrapTheNextKey) {
    // Clock skew: step 1 runs [0, 1200) on some rank, step 2 [900, 1100),
    // step 3 [1300, 1400). The view fitted to step 2 is centred at 1000,
    // inside steps 1 and 2: it is step 2 (its middle), so ] goes to step 3.
    Analysis a;
    a.devices.push_back(deviceWithSteps({{0, 1200}, {900, 1100}, {1300, 1400}}));
    const std::vector<JobStep> steps = jobSteps(a);
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(stepAt(steps, 1000), 1);
    EXPECT_EQ(neighbourStep(steps, 1000, +1), 2);
    EXPECT_EQ(neighbourStep(steps, 1000, -1), 0);
    EXPECT_EQ(stepAt(steps, 100), 0);
}

namespace {

std::vector<std::string> laneLabels(const TimelineModel& m, int group) {
    std::vector<std::string> out;
    for (int l : m.groups()[static_cast<size_t>(group)].lanes) out.push_back(m.lane(l).label);
    return out;
}

std::vector<std::string> hiddenLabels(const TimelineModel& m, int group) {
    std::vector<std::string> out;
    for (int l : m.groups()[static_cast<size_t>(group)].lanes)
        if (m.lane(l).hidden) out.push_back(m.lane(l).label);
    return out;
}

}  // namespace

TEST(SavedLayout, CollapsedHiddenAndOrderComeBackOnAFreshModel) {
    // Issue 30 item 7: what the user arranged survives closing the file.
    const auto capture = guitest::smallCapture(2, 100);
    TimelineModel m(capture);
    EXPECT_TRUE(layoutOf(m).empty());  // nothing to keep by default
    ASSERT_GE(m.groups()[1].lanes.size(), 3u);
    m.setCollapsed(0, true);
    const int hide = m.groups()[1].lanes[1];
    m.setHidden(hide, true);
    const int moved = m.groups()[1].lanes[2];
    m.moveLane(moved, -2);  // to the top of its group
    EXPECT_EQ(m.groups()[1].lanes[0], moved);

    const SavedLayout layout = layoutOf(m);
    const auto parsed = SavedLayout::fromJson(layout.toJson());
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->groups, layout.groups);
    ASSERT_EQ(layout.groups.size(), 2u);
    EXPECT_TRUE(layout.groups[0].collapsed);
    EXPECT_TRUE(layout.groups[0].order.empty());  // group 0 kept its order
    EXPECT_EQ(layout.groups[1].hidden, (std::vector<std::string>{m.lane(hide).label}));

    TimelineModel fresh(capture);
    applyLayout(fresh, *parsed);
    EXPECT_TRUE(fresh.groups()[0].collapsed);
    EXPECT_FALSE(fresh.groups()[1].collapsed);
    EXPECT_EQ(laneLabels(fresh, 1), laneLabels(m, 1));
    EXPECT_EQ(laneLabels(fresh, 0), laneLabels(m, 0));
    EXPECT_EQ(hiddenLabels(fresh, 1), (std::vector<std::string>{m.lane(hide).label}));
    EXPECT_TRUE(hiddenLabels(fresh, 0).empty());
}

TEST(SavedLayout, UnknownGroupsAndLanesAreIgnoredAndNewLanesKeepTheirPlace) {
    const auto capture = guitest::smallCapture(1);
    TimelineModel m(capture);
    const std::vector<std::string> before = laneLabels(m, 0);
    ASSERT_GE(before.size(), 3u);
    SavedLayout layout;
    layout.groups.push_back({"elsewhere|1|0", true, {}, {}});
    // The last lane first; a lane this capture does not have; the others unnamed.
    SavedLayout::Group g;
    g.key = m.processOf(0).host + "|" + std::to_string(m.processOf(0).pid) + "|0";
    g.order = {before.back(), "stream 99 · gone"};
    layout.groups.push_back(g);
    applyLayout(m, layout);
    EXPECT_FALSE(m.groups()[0].collapsed);
    std::vector<std::string> expected{before.back()};
    expected.insert(expected.end(), before.begin(), before.end() - 1);
    EXPECT_EQ(laneLabels(m, 0), expected);
    EXPECT_FALSE(SavedLayout::fromJson("not json"));
    EXPECT_FALSE(SavedLayout::fromJson(R"({"version":2,"groups":[]})"));
    EXPECT_FALSE(SavedLayout::fromJson(R"({"version":1,"groups":[{"group":3}]})"));
}

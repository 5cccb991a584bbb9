// A thousand ranks (issue 40 parts 3 and 4), the model side: lateness per
// rank against the lower median worked out here, heat map cells against a
// brute force over the arrivals, the pixel row of many ranks keeping the
// outlier, column medians, the arrival summary and its pixels, a click on a
// rank's thin row, and the communicators of the collectives across ranks.
#include "analyzer/crossrank/analyze.h"
#include "gui/model/arrival_summary.h"
#include "gui/model/heat_map.h"
#include "gui/model/rank_collectives.h"
#include "gui/model/rank_lateness.h"
#include "gui/model/rank_row_hit.h"
#include "gui/model/timeline_model.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace osc::gui {
namespace {

using guitest::addKernel;
using guitest::kAllReduce;

// An analysis made by hand: `starts[m][d]` is device d's start of matched
// collective m (each lasting 1000 ns, in step m), device d is rank d.
Analysis handMade(const std::vector<std::vector<TimeNs>>& starts,
                  const std::vector<std::optional<uint64_t>>& comms = {},
                  const std::vector<std::vector<int>>& members = {}) {
    Analysis a;
    const size_t devices = starts.empty() ? 0 : starts.front().size();
    a.devices.resize(devices);
    for (size_t d = 0; d < devices; ++d) a.devices[d].rank = static_cast<int>(d);
    for (size_t m = 0; m < starts.size(); ++m) {
        MatchedCollective mc;
        mc.collective = "AllReduce";
        if (m < comms.size()) mc.commHash = comms[m];
        for (size_t d = 0; d < devices; ++d) {
            if (m < members.size() &&
                std::find(members[m].begin(), members[m].end(), static_cast<int>(d)) == members[m].end())
                continue;
            CollectiveInstance c;
            c.collective = "AllReduce";
            c.start_ns = starts[m][d];
            c.end_ns = c.start_ns + 1000;
            c.duration_ns = 1000;
            c.step = static_cast<int>(m);
            c.commHash = mc.commHash;
            mc.instances.emplace_back(static_cast<int>(d), static_cast<int>(a.devices[d].collectives.size()));
            a.devices[d].collectives.push_back(c);
        }
        a.matched.push_back(std::move(mc));
    }
    return a;
}

TEST(RankLateness, EachArrivalAgainstTheLowerMedianOfItsCollective) {
    // Five ranks: the lower median of {100, 400, 250, 900, 300} is 300;
    // of {0, 10, 20, 30, 5000} it is 20.
    const Analysis a = handMade({{100, 400, 250, 900, 300}, {10'000, 10'010, 10'020, 10'030, 15'000}});
    const RankLateness l = rankLateness(a);
    ASSERT_EQ(l.byDevice.size(), 5u);
    const TimeNs expect[2][5] = {{-200, 100, -50, 600, 0}, {-20, -10, 0, 10, 4980}};
    for (size_t d = 0; d < 5; ++d) {
        ASSERT_EQ(l.byDevice[d].size(), 2u);
        for (int m = 0; m < 2; ++m) {
            EXPECT_EQ(l.byDevice[d][static_cast<size_t>(m)].late, expect[m][d]) << d << " " << m;
            EXPECT_EQ(l.byDevice[d][static_cast<size_t>(m)].step, m);
        }
    }
    EXPECT_EQ(l.latest, 4980);
    // Two ranks: the lower median is the earlier start.
    const RankLateness two = rankLateness(handMade({{500, 800}}));
    EXPECT_EQ(two.byDevice[0][0].late, 0);
    EXPECT_EQ(two.byDevice[1][0].late, 300);
}

TEST(RankLateness, LatestInAWindowEqualsABruteForce) {
    // A late arrival covers [start - late, start], one on time its start.
    std::mt19937 rng(3);
    std::uniform_int_distribution<TimeNs> at(0, 100'000), late(-5'000, 5'000);
    std::vector<Arrival> arrivals(300);
    TimeNs latest = 0;
    for (Arrival& x : arrivals) {
        x = {at(rng), late(rng), 0, 0};
        latest = std::max(latest, x.late);
    }
    std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& x, const Arrival& y) { return x.start < y.start; });
    for (int k = 0; k < 400; ++k) {
        TimeNs from = at(rng), to = from + at(rng) / 50;  // windows of up to 2 us: most meet a few covers
        TimeNs brute = -1;
        for (const Arrival& x : arrivals) {
            const TimeNs l = std::max<TimeNs>(0, x.late);
            for (TimeNs t = x.start - l; t <= x.start; ++t)
                if (t >= from && t < to) {
                    brute = std::max(brute, l);
                    break;
                }
        }
        EXPECT_EQ(latestIn(arrivals, latest, from, to), brute) << from << " " << to;
    }
}

// `ranks` ranks, rank r's all-reduces of `steps` steps at step * 100 us plus
// skew[r]; two gemms around each. Analysed as the window does.
struct Job {
    std::shared_ptr<Capture> capture;
    Analysis analysis;
    std::shared_ptr<TimelineModel> model;
};

Job skewedJob(int ranks, int steps, const std::vector<TimeNs>& skew) {
    Job j;
    j.capture = std::make_shared<Capture>();
    for (int r = 0; r < ranks; ++r) {
        Process p;
        p.host = "node-" + std::to_string(r / 8);
        p.pid = 100 + r;
        p.rank = r;
        p.worldSize = ranks;
        Device& d = p.deviceById(static_cast<uint32_t>(r % 8));
        for (int s = 0; s < steps; ++s) {
            const TimeNs t = s * 100'000 + skew[static_cast<size_t>(r)];
            addKernel(*j.capture, d, t, t + 30'000, 7, "gemm_kernel");
            addKernel(*j.capture, d, t + 20'000, t + 50'000, 13, kAllReduce);
            addKernel(*j.capture, d, t + 50'000, t + 60'000, 7, "gemm_kernel");
        }
        j.capture->processes.push_back(std::move(p));
    }
    j.capture->finalize();
    j.analysis = analyze(*j.capture);
    j.model = std::make_shared<TimelineModel>(j.capture);
    j.model->annotate(j.analysis);
    return j;
}

TEST(HeatMapLateness, CellsAreTheLatestArrivalInTheirBucket) {
    std::vector<TimeNs> skew(12, 0);
    for (size_t r = 0; r < skew.size(); ++r) skew[r] = static_cast<TimeNs>(r % 3) * 100;  // jitter of 0-200 ns
    skew[7] = 4'000;                                                                      // the late rank
    const Job j = skewedJob(12, 4, skew);
    const RankLateness late = rankLateness(j.analysis);
    const ViewRange range{0, 400'000};
    const HeatMap h = heatMapByTime(*j.model, range, 40, HeatMetric::Lateness, &late);
    ASSERT_EQ(h.rows(), 12);
    float top = 0;
    for (int r = 0; r < h.rows(); ++r) {
        const int rank = j.model->processOf(h.groups[static_cast<size_t>(r)]).rank;
        for (int c = 0; c < h.columns; ++c) {
            const ViewRange w = h.window(r, c);
            // Brute force: every rank's all-reduce starts at step * 100 us + 20 us + skew; its
            // lateness is that minus the lower median of the twelve starts (skews: four 0,
            // three 100, four 200 and 4000: the sixth smallest is 100), and covers the time
            // from the median's start to its own.
            TimeNs expect = -1;
            for (int s = 0; s < 4; ++s) {
                const TimeNs start = s * 100'000 + 20'000 + skew[static_cast<size_t>(rank)];
                const TimeNs lateness = std::max<TimeNs>(0, skew[static_cast<size_t>(rank)] - 100);
                bool meets = false;
                for (TimeNs t = start - lateness; t <= start && !meets; ++t) meets = t >= w.start && t < w.end;
                if (meets) expect = std::max(expect, lateness);
            }
            const float v = h.at(r, c);
            if (expect < 0)
                EXPECT_TRUE(std::isnan(v)) << r << " " << c;
            else
                EXPECT_EQ(v, static_cast<float>(expect)) << r << " " << c;
            if (!std::isnan(v)) top = std::max(top, v);
        }
    }
    EXPECT_EQ(h.fullScale, 3'900.f) << "the largest lateness: 4000 - 100";
    ASSERT_GE(h.latestRow, 0);
    EXPECT_EQ(j.model->processOf(h.groups[static_cast<size_t>(h.latestRow)]).rank, 7);
    EXPECT_EQ(top, h.fullScale);
    // Per step: one column a step, the same values.
    const HeatMap steps = heatMapBySteps(j.analysis, HeatMetric::Lateness, &late);
    for (int r = 0; r < steps.rows(); ++r)
        for (int c = 0; c < steps.columns; ++c) {
            const int rank = j.analysis.devices[static_cast<size_t>(r)].rank;
            EXPECT_EQ(steps.at(r, c), static_cast<float>(std::max<TimeNs>(0, skew[static_cast<size_t>(rank)] - 100)));
        }
}

HeatMap column(const std::vector<float>& values, float fullScale = 1) {
    HeatMap h;
    h.groups.assign(values.size(), -1);
    h.columns = 1;
    h.values = values;
    h.fullScale = fullScale;
    return h;
}

TEST(HeatMapRows, APixelRowOfManyRanksKeepsTheOutlierInEitherDirection) {
    // 64 ranks, one column: everyone hides 10 % of its communication except
    // rank 37, which arrives late and hides 90 % (it waits least). The
    // worst (lowest) of ranks 36-39 would hide it; the farthest from the
    // median keeps it.
    std::vector<float> v(64, 0.1f);
    v[37] = 0.9f;
    const HeatMap h = column(v);
    const std::vector<float> med = columnMedians(h);
    ASSERT_EQ(med.size(), 1u);
    EXPECT_NEAR(med[0], 0.1f, 1.f / 255);
    EXPECT_EQ(shownRow(h, 36, 40, 0, med[0], HeatMetric::OverlapRatio), 37);
    EXPECT_EQ(worstOf(worstOf(v[36], v[37], HeatMetric::OverlapRatio), v[38], HeatMetric::OverlapRatio), 0.1f)
        << "what the worst would have shown";
    // The other direction: one rank hides nothing.
    v[37] = 0.f;
    EXPECT_EQ(shownRow(column(v), 36, 40, 0, med[0], HeatMetric::OverlapRatio), 37);
    // Exposed share: the odd one is the one with less exposed than the rest.
    std::vector<float> e(64, 0.6f);
    e[12] = 0.05f;
    const HeatMap he = column(e);
    EXPECT_EQ(shownRow(he, 12, 16, 0, columnMedians(he)[0], HeatMetric::ExposedShare), 12);
    // Lateness: the latest, whatever the median.
    std::vector<float> l(64, 0.f);
    l[50] = 2e6f;
    l[51] = 1e3f;
    EXPECT_EQ(shownRow(column(l, 2e6f), 48, 52, 0, std::nanf(""), HeatMetric::Lateness), 50);
    // NaN rows are shown only when all are; equal distances go to the worse.
    std::vector<float> n = {std::nanf(""), 0.3f, 0.7f, std::nanf("")};
    EXPECT_EQ(shownRow(column(n), 0, 4, 0, 0.5f, HeatMetric::OverlapRatio), 1);
    EXPECT_EQ(shownRow(column({std::nanf(""), std::nanf("")}), 0, 2, 0, 0.5f, HeatMetric::OverlapRatio), 0);
}

TEST(HeatMapRows, ColumnMediansEqualABruteForce) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    HeatMap h;
    const int rows = 301, columns = 150;  // more columns than one thread's block
    h.groups.assign(rows, -1);
    h.columns = columns;
    h.values.resize(static_cast<size_t>(rows) * columns);
    for (float& x : h.values) x = u(rng) < 0.1f ? std::nanf("") : u(rng);
    const std::vector<float> med = columnMedians(h);
    for (int c = 0; c < columns; ++c) {
        std::vector<float> col;
        for (int r = 0; r < rows; ++r)
            if (!std::isnan(h.at(r, c))) col.push_back(h.at(r, c));
        std::sort(col.begin(), col.end());
        const float lower = col[(col.size() - 1) / 2];
        EXPECT_NEAR(med[static_cast<size_t>(c)], lower, 1.0 / 255) << c;
    }
}

TEST(ArrivalSummary, FewRanksALineEachManyRanksTheSpread) {
    std::vector<TimeNs> skew(20, 0);
    for (size_t r = 0; r < skew.size(); ++r) skew[r] = static_cast<TimeNs>(r) * 10;
    skew[13] = 3'000;
    const Job j = skewedJob(20, 1, skew);
    // Rank 0's all-reduce, and the other 19 ranks' as its matches.
    std::vector<EventRef> matches;
    EventRef selected;
    for (size_t g = 0; g < j.model->groups().size(); ++g) {
        const EventRef ref = j.model->findKernel(static_cast<int>(g), 1);
        if (g == 0)
            selected = ref;
        else
            matches.push_back(ref);
    }
    ASSERT_TRUE(selected.valid());
    const ArrivalSummary s = arrivalSummary(*j.model, selected, matches);
    EXPECT_EQ(s.ranks, 20);
    ASSERT_TRUE(s.summarised());
    EXPECT_EQ(s.earliest, 20'000);
    EXPECT_EQ(s.latest, 23'000);
    // Starts 20000 + 10 r (r != 13) and 23000: the tenth smallest is r = 9.
    EXPECT_EQ(s.median, 20'090);
    EXPECT_EQ(j.model->processOf(s.lastGroup).rank, 13);
    EXPECT_EQ(arrivalCaption(*j.model, s), "20 ranks arrive over 3 µs · last: rank 13, 2.91 µs after the median");
    // 10 ns a pixel from t = 15000, the event area from x = 240.
    const TimeScale scale({15'000, 25'000}, 1000);
    const ArrivalMarks m = arrivalMarks(s, scale, 240);
    EXPECT_TRUE(m.summarised);
    EXPECT_TRUE(m.lines.empty()) << "no line per rank";
    EXPECT_DOUBLE_EQ(m.bandFrom, 240 + 500);
    EXPECT_DOUBLE_EQ(m.bandTo, 240 + 800);
    EXPECT_DOUBLE_EQ(m.medianX, 240 + 509);
    EXPECT_DOUBLE_EQ(m.latestX, 240 + 800);
    // Three ranks: a line at each start.
    const std::vector<EventRef> two(matches.begin(), matches.begin() + 2);
    const ArrivalSummary few = arrivalSummary(*j.model, selected, two);
    ASSERT_FALSE(few.summarised());
    const ArrivalMarks lines = arrivalMarks(few, scale, 240);
    EXPECT_EQ(lines.lines, (std::vector<double>{740, 741, 742}));
    EXPECT_EQ(arrivalSummary(*j.model, selected, {}).ranks, 0);
}

TEST(RankRowHit, AClickOnAThinRowPicksTheCollectiveElseTheWorkUnderIt) {
    const Job j = skewedJob(2, 1, {0, 0});
    // Rank 0: gemm [0, 30000), all-reduce [20000, 50000), gemm [50000, 60000).
    const auto kernelAt = [&](TimeNs t, TimeNs tolerance) {
        const EventRef ref = rankRowHit(*j.model, 0, t, tolerance);
        if (!ref.valid()) return std::string("none");
        const EventRow& row = j.model->lane(ref.lane).rows[static_cast<size_t>(ref.row)];
        return std::to_string(row.start[ref.index]);
    };
    EXPECT_EQ(kernelAt(25'000, 100), "20000") << "both run: the collective";
    EXPECT_EQ(kernelAt(10'000, 100), "0") << "only the gemm";
    EXPECT_EQ(kernelAt(55'000, 100), "50000");
    EXPECT_EQ(kernelAt(60'050, 100), "50000") << "within the tolerance";
    EXPECT_EQ(kernelAt(70'000, 100), "none");
    EXPECT_FALSE(rankRowHit(*j.model, 99, 0, 0).valid());
}

TEST(RankCommunicators, RowsNameTheirGroupByItsRanks) {
    // A 2x2 mesh as in examples/h200/pytorch_mesh_torch_profiler: tensor
    // parallel {0,1} (hash 0xA) and {2,3} (0xB), data parallel {0,2} (0xC)
    // and {1,3} (0xD); one collective matched by order (no hash), and a
    // second group over {0,1} (0xE).
    const std::vector<TimeNs> t = {0, 0, 0, 0};
    const Analysis a = handMade({t, t, t, t, t, t, t}, {0xA, 0xB, 0xC, 0xD, 0xA, std::nullopt, 0xE},
                                {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {0, 1}, {0, 1, 2, 3}, {0, 1}});
    auto rows = rankCollectiveRows(a);
    ASSERT_EQ(rows.size(), 7u);
    const auto comms = rankCommunicators(a, rows);
    ASSERT_EQ(comms.size(), 5u);
    // By lowest rank, then the members, then the hash.
    EXPECT_EQ(comms[0].hash, 0xAu);
    EXPECT_EQ(comms[1].hash, 0xEu);
    EXPECT_EQ(comms[2].hash, 0xCu);
    EXPECT_EQ(comms[3].hash, 0xDu);
    EXPECT_EQ(comms[4].hash, 0xBu);
    EXPECT_EQ(comms[0].label, "ranks 0–1 (0xa)") << "two groups over the same ranks: the hash tells them apart";
    EXPECT_EQ(comms[1].label, "ranks 0–1 (0xe)");
    EXPECT_EQ(comms[2].label, "ranks 0, 2");
    EXPECT_EQ(comms[3].label, "ranks 1, 3");
    EXPECT_EQ(comms[4].label, "ranks 2–3");
    EXPECT_EQ(comms[0].collectives, 2);
    EXPECT_EQ(comms[4].collectives, 1);
    const int expect[7] = {0, 4, 2, 3, 0, -1, 1};
    for (size_t i = 0; i < rows.size(); ++i) {
        ASSERT_EQ(rows[i].matched, static_cast<int>(i));
        EXPECT_EQ(rows[i].communicator, expect[i]) << i;
        EXPECT_EQ(rows[i].commHash, a.matched[i].commHash) << i;
    }
}

}  // namespace
}  // namespace osc::gui

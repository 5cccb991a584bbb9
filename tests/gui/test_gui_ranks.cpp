// Many ranks (issue 30 item 3): the per-collective rows against answers
// worked out here from known per-rank times, the grouping of ranks by host
// and by communicator on hand-made jobs, and one row per rank fitting a
// window.
#include "analyzer/crossrank/analyze.h"
#include "gui/model/lane_layout.h"
#include "gui/model/rank_collectives.h"
#include "gui/model/rank_groups.h"
#include "gui/model/saved_layout.h"
#include "gui/model/timeline_model.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace osc::gui {
namespace {

using guitest::addApiCall;
using guitest::addKernel;
using guitest::addRange;
using guitest::kAllReduce;

// `ranks` processes, rank r on host "node-<r / perHost>", each with one
// compute kernel and the overlap lane: enough for the lane layout.
std::shared_ptr<Capture> spreadJob(int ranks, int perHost) {
    auto c = std::make_shared<Capture>();
    for (int r = 0; r < ranks; ++r) {
        Process p;
        p.host = "node-" + std::to_string(r / perHost);
        p.pid = 100 + r;
        p.rank = r;
        p.worldSize = ranks;
        Device& d = p.deviceById(static_cast<uint32_t>(r % perHost));
        addKernel(*c, d, 1000, 5000, 7, "gemm_kernel");
        addKernel(*c, d, 4000, 7000, 13, kAllReduce);
        c->processes.push_back(std::move(p));
    }
    c->finalize();
    return c;
}

RankIdentity id(int group, std::string host, int rank, std::vector<uint64_t> comms = {}) {
    RankIdentity i;
    i.group = group;
    i.host = std::move(host);
    i.rank = rank;
    i.device = 0;
    i.pid = 100 + group;
    i.comms = std::move(comms);
    return i;
}

TEST(RankGroups, ByHostInJobOrderWithRankSpans) {
    // Groups listed out of rank order, hosts interleaved: sections come in
    // the order of their lowest rank, ranks ascending inside.
    const std::vector<RankIdentity> ids = {id(0, "b", 2), id(1, "a", 3), id(2, "b", 0),
                                           id(3, "a", 1), id(4, "c", 4), id(5, "a", 5)};
    const auto s = groupRanks(ids, RankGrouping::Host);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].key, "b");
    EXPECT_EQ(s[0].groups, (std::vector<int>{2, 0}));  // ranks 0, 2
    EXPECT_EQ(s[0].title, "b · 2 GPUs · ranks 0, 2");
    EXPECT_EQ(s[1].key, "a");
    EXPECT_EQ(s[1].groups, (std::vector<int>{3, 1, 5}));  // ranks 1, 3, 5
    EXPECT_EQ(s[2].groups, (std::vector<int>{4}));
    EXPECT_EQ(s[2].title, "c · 1 GPU · rank 4");
    EXPECT_TRUE(groupRanks(ids, RankGrouping::None).empty());
}

TEST(RankGroups, ByCommunicatorSmallestFirst) {
    // Ranks 0-7: tensor-parallel communicators 0x20 (0-3) and 0x10 (4-7), a
    // pair 0x7 (2 and 5) smaller still, and 0x5 over all eight; rank 8 names none.
    std::vector<RankIdentity> ids;
    for (int r = 0; r < 8; ++r) {
        std::vector<uint64_t> comms = {0x5, r < 4 ? 0x20u : 0x10u};
        if (r == 2 || r == 5) comms.push_back(0x7);
        ids.push_back(id(r, "h", r, comms));
    }
    ids.push_back(id(8, "h", 8));
    const auto s = groupRanks(ids, RankGrouping::Communicator);
    ASSERT_EQ(s.size(), 4u);
    // 0x7 claims 2 and 5 first; the others then take what is left, ordered by their lowest rank.
    EXPECT_EQ(s[0].key, "0x20");
    EXPECT_EQ(s[0].groups, (std::vector<int>{0, 1, 3}));
    EXPECT_EQ(s[0].title, "communicator 0x20 · 3 of its 4 ranks (the others under a smaller one) · ranks 0, 1, 3");
    EXPECT_EQ(s[1].key, "0x7");
    EXPECT_EQ(s[1].groups, (std::vector<int>{2, 5}));
    EXPECT_EQ(s[2].key, "0x10");
    EXPECT_EQ(s[2].groups, (std::vector<int>{4, 6, 7}));
    EXPECT_EQ(s[3].key, "");
    EXPECT_EQ(s[3].groups, (std::vector<int>{8}));
}

TEST(RankGroups, SectionsOrderTheLanesAndCollapse) {
    // Ranks 0-5 with 2 per host; grouped by host they keep rank order.
    const auto capture = spreadJob(6, 2);
    TimelineModel model(capture);
    RankView view;
    view.setIdentities(rankIdentities(model, nullptr));
    view.setGrouping(RankGrouping::Host);
    view.setCollapsed("node-1", true);
    const LaneLayout layout(model, view.rows(0));
    ASSERT_EQ(layout.sections().size(), 3u);
    std::vector<int> shownRanks;
    for (const GroupSlot& g : layout.groups()) shownRanks.push_back(model.processOf(g.group).rank);
    EXPECT_EQ(shownRanks, (std::vector<int>{0, 1, 4, 5}));  // node-1 (ranks 2, 3) collapsed
    // Each section header sits above its groups' headers and nothing overlaps it.
    const LaneMetrics m;
    EXPECT_EQ(layout.sections()[0].y, 0);
    EXPECT_EQ(layout.groups()[0].y, m.sectionHeight);
    EXPECT_EQ(layout.sections()[2].y, layout.sections()[1].y + m.sectionHeight);  // nothing under node-1
    EXPECT_EQ(layout.sectionHeaderAt(layout.sections()[1].y + 3), 1);
    EXPECT_EQ(layout.groupHeaderAt(layout.sections()[1].y + 3), -1);
}

TEST(RankGroups, RankViewRoundTripsThroughTheSavedLayout) {
    RankView view;
    SavedLayout layout;
    saveRankView(layout, view);
    EXPECT_TRUE(layout.empty());  // the default view is nothing to keep
    EXPECT_EQ(layout.toJson().find("ranks"), std::string::npos);
    view.setGrouping(RankGrouping::Communicator);
    view.setCollapsed("0x2a", true);
    view.setCollapsed("0x07", true);
    view.setOneRow(true);
    saveRankView(layout, view);
    EXPECT_FALSE(layout.empty());
    const auto parsed = SavedLayout::fromJson(layout.toJson());
    ASSERT_TRUE(parsed);
    RankView back;
    back.setCollapsed("stale", true);  // what a view had before is replaced
    restoreRankView(back, *parsed);
    EXPECT_EQ(back.grouping(), RankGrouping::Communicator);
    EXPECT_TRUE(back.oneRow());
    EXPECT_EQ(back.collapsedKeys(), (std::set<std::string>{"0x07", "0x2a"}));
    // Each grouping by its own name; a layout saved before rank views had none.
    for (RankGrouping g : {RankGrouping::None, RankGrouping::Host, RankGrouping::Communicator}) {
        SavedLayout l;
        l.rankGrouping = g;
        l.oneRowPerRank = true;
        const auto p = SavedLayout::fromJson(l.toJson());
        ASSERT_TRUE(p);
        EXPECT_EQ(p->rankGrouping, g);
    }
    const auto old = SavedLayout::fromJson(R"({"version":1,"groups":[]})");
    ASSERT_TRUE(old);
    EXPECT_EQ(old->rankGrouping, RankGrouping::None);
    EXPECT_FALSE(old->oneRowPerRank);
    EXPECT_FALSE(
        SavedLayout::fromJson(R"({"version":1,"groups":[],"ranks":{"grouping":"rack","folded":[],"one_row":false}})"));
}

TEST(RankRowsLayout, SixtyFourRanksFitAWindowInOneRowEach) {
    // 64 ranks on 8 hosts; the timeline of a 1920x1080 window leaves about
    // 560 px under the ruler with the panels docked below.
    const auto capture = spreadJob(64, 8);
    TimelineModel model(capture);
    RankView view;
    view.setIdentities(rankIdentities(model, nullptr));
    view.setGrouping(RankGrouping::Host);
    view.setOneRow(true);
    const int available = 560;
    const LaneLayout layout(model, view.rows(available));
    const LaneMetrics m;
    // (560 - 8 headers of 18 px - 3 px under the last row) / 64 rows = 6.45:
    // a pitch of 6 px, rows of 5 and a 1 px gap.
    EXPECT_EQ(layout.rankPitch(), 6);
    EXPECT_LE(layout.totalHeight(), available);
    EXPECT_EQ(layout.totalHeight(), 8 * m.sectionHeight + 64 * 6 + 3);
    ASSERT_EQ(layout.lanes().size(), 64u);
    EXPECT_TRUE(layout.groups().empty());  // no per-device title bars
    std::set<int> groups;
    int lastBottom = 0;
    for (const LaneSlot& s : layout.lanes()) {
        EXPECT_TRUE(s.rankRow);
        EXPECT_EQ(model.lane(s.lane).kind, LaneKind::Overlap);
        EXPECT_EQ(s.height, 5);
        EXPECT_GE(s.y, lastBottom);  // below the previous row or header
        EXPECT_EQ(layout.sectionHeaderAt(s.y), -1);
        lastBottom = s.y + s.height;
        groups.insert(s.group);
        EXPECT_EQ(layout.rankRowOf(s.group), &s);
    }
    EXPECT_EQ(groups.size(), 64u);
    // In job order: rank r is the r-th row.
    for (size_t r = 0; r < layout.lanes().size(); ++r)
        EXPECT_EQ(model.processOf(layout.lanes()[r].group).rank, static_cast<int>(r));
    // Without headers the rows grow: floor((560 - 6) / 64) = 8.
    view.setGrouping(RankGrouping::None);
    EXPECT_EQ(LaneLayout(model, view.rows(available)).rankPitch(), 8);
}

TEST(RankRowsLayout, PitchAndLabelStride) {
    const LaneMetrics m;
    EXPECT_EQ(LaneLayout::rankPitch(4, 1, false, 1000, m), LaneLayout::kMaxRankPitch);    // few ranks: no giant rows
    EXPECT_EQ(LaneLayout::rankPitch(1024, 1, false, 600, m), LaneLayout::kMinRankPitch);  // then they scroll
    EXPECT_EQ(LaneLayout::rankPitch(100, 2, true, 539, m), 5);                            // (539 - 2 * 18 - 3) / 100
    EXPECT_EQ(LaneLayout::rankPitch(100, 2, true, 538, m), 4);
    EXPECT_EQ(LaneLayout::rankPitch(100, 1, false, 506, m), 5);  // (506 - 3 - 3) / 100
    EXPECT_EQ(LaneLayout::labelStride(18, 13), 1);
    EXPECT_EQ(LaneLayout::labelStride(6, 13), 3);  // 6 px rows: every third labelled, 18 px apart
    EXPECT_EQ(LaneLayout::labelStride(13, 13), 1);
}

// Per rank, three all-reduces whose starts and ends are drawn at random:
// the rows' skew, last rank, waiting and transfer against a brute force
// over those very times.
TEST(RankCollectives, RowsEqualABruteForceOverKnownArrivals) {
    constexpr int kRanks = 6, kOps = 3;
    std::mt19937 rng(7);
    std::uniform_int_distribution<TimeNs> jitter(0, 400), length(1000, 3000);
    TimeNs start[kOps][kRanks], end[kOps][kRanks];
    auto c = std::make_shared<Capture>();
    for (int r = 0; r < kRanks; ++r) {
        Process p;
        p.host = "node";
        p.pid = 200 + r;
        p.rank = r;
        p.worldSize = kRanks;
        Device& d = p.deviceById(0);
        for (int k = 0; k < kOps; ++k) {
            start[k][r] = 10'000 * (k + 1) + jitter(rng);
            end[k][r] = start[k][r] + 500 + length(rng);
            // Launched inside the step range, so the step's GPU window holds them.
            const uint32_t corr = static_cast<uint32_t>(2 * k + 1);
            addApiCall(*c, p, 10'000 * k + 100, 10'000 * k + 200, 1, "cudaLaunchKernel", corr);
            addApiCall(*c, p, 10'000 * k + 300, 10'000 * k + 400, 1, "cudaLaunchKernel", corr + 1);
            addKernel(*c, d, 10'000 * (k + 1) - 2000, 10'000 * (k + 1) + 100, 7, "gemm_kernel", corr);
            addKernel(*c, d, start[k][r], end[k][r], 13, kAllReduce, corr + 1);
        }
        addRange(*c, p, 0, 50'000, "ProfilerStep#1");
        c->processes.push_back(std::move(p));
    }
    c->finalize();
    const Analysis a = analyze(*c);
    const auto rows = rankCollectiveRows(a);
    ASSERT_EQ(rows.size(), static_cast<size_t>(kOps));
    for (const RankCollectiveRow& row : rows) {
        ASSERT_GE(row.bucket, 1);
        const int k = row.bucket - 1;  // the k-th all-reduce of the step
        TimeNs first = INT64_MAX, last = INT64_MIN, firstEnd = INT64_MAX, latestEnd = INT64_MIN, sum = 0;
        int lastRank = -1;
        for (int r = 0; r < kRanks; ++r) {
            first = std::min(first, start[k][r]);
            if (start[k][r] > last) last = start[k][r], lastRank = r;
            firstEnd = std::min(firstEnd, end[k][r]);
            latestEnd = std::max(latestEnd, end[k][r]);
            sum += end[k][r] - start[k][r];
        }
        TimeNs waiting = 0;
        for (int r = 0; r < kRanks; ++r) waiting += std::min(end[k][r], last) - start[k][r];
        EXPECT_EQ(row.collective, "AllReduce");
        EXPECT_EQ(row.step, "ProfilerStep#1");
        EXPECT_EQ(row.ranks, kRanks);
        EXPECT_EQ(row.skew_ns, last - first) << "op " << k;
        EXPECT_EQ(row.lastRank, lastRank) << "op " << k;
        EXPECT_EQ(row.waiting_ns, waiting) << "op " << k;
        EXPECT_EQ(row.transfer_ns, firstEnd - last) << "op " << k;
        EXPECT_EQ(row.rankTime_ns, sum);
        EXPECT_EQ(row.start_ns, first);
        EXPECT_EQ(row.end_ns, latestEnd);
        EXPECT_FALSE(row.bytes.has_value());  // no plugin rows: nothing says how much moved
    }
}

}  // namespace
}  // namespace osc::gui

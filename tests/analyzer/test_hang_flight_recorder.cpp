// The hang analysis on Flight Recorder dumps, against answers worked by
// hand or known by construction: docs/design.md 4d's example, partial ring
// buffers whose pg_status says what the entries no longer do, entries
// reordered, mixture-of-experts all-to-alls with uneven sizes, many groups
// with several stuck ranks and absent members, two dumps of one rank, a
// rank outside its group, impossible times; and simulated jobs with a
// stalled rank, their dumps cut to ring buffers, shuffled, half of them
// pickles: no rank that entered the hung call is ever called stuck.
#include "analyzer/hang/hang.h"
#include "analyzer/hang/hang_output.h"
#include "tests/analyzer/flight_recorder_fixture.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <random>
#include <set>

namespace osc {
namespace {

using test::FrDumpSpec;
using test::FrEntrySpec;
using test::FrStatusSpec;

constexpr int64_t kT0 = 1'760'000'000'000'000'000;

using test::frEntry;

FrEntrySpec in(FrEntrySpec e, const std::string& pg, const std::string& desc, int64_t pgId) {
    e.pg = pg;
    e.desc = desc;
    e.pgId = pgId;
    return e;
}

class Dumps {
public:
    // Rank r's dump, as a pickle where `pickle`, else JSON.
    FlightRecorderDump add(int rank, const FrDumpSpec& d, bool pickle = false,
                           const std::string& name = "nccl_trace_rank_") {
        const std::string path = dir_ / (name + std::to_string(rank));
        test::writeText(path, pickle ? test::frPickle(d) : test::frJson(d));
        dumps_.push_back(readFlightRecorderDump(path));
        return dumps_.back();
    }
    hang::HangAnalysis analyze() const { return hang::analyzeHang(nullptr, dumps_); }
    std::vector<FlightRecorderDump>& all() { return dumps_; }
    const testsupport::TempDir& dir() const { return dir_; }

private:
    testsupport::TempDir dir_;
    std::vector<FlightRecorderDump> dumps_;
};

std::set<int> stuckRanks(const hang::HangAnalysis& a, bool presentOnly = false) {
    std::set<int> out;
    for (const auto& s : a.stuck)
        if (!presentOnly || s.member >= 0) out.insert(s.rank);
    return out;
}

std::set<int> waitingRanks(const hang::HangAnalysis& a, size_t c) {
    std::set<int> out;
    if (a.hung[c])
        for (int m : a.hung[c]->waitingRanks) out.insert(a.communicators[c].ranks[static_cast<size_t>(m)].rank);
    return out;
}

std::string text(const hang::HangAnalysis& a) { return hang::formatHangText(a); }

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// docs/design.md 4d's example on dumps: four ranks of the default group,
// ranks 0-2 entered 17 and never completed it, rank 3's last is 16.
TEST(FlightRecorderHang, TheDesignExample) {
    for (const bool pickle : {false, true}) {
        Dumps dumps;
        for (int r = 0; r < 4; ++r) {
            FrDumpSpec d;
            d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}};
            for (int s = 1; s <= 16; ++s) d.entries.push_back(frEntry(s, "completed"));
            if (r != 3) d.entries.push_back(frEntry(17, "started"));
            dumps.add(r, d, pickle);
        }
        const hang::HangAnalysis a = dumps.analyze();
        EXPECT_EQ(a.verdict, hang::Verdict::Hang);
        ASSERT_EQ(a.stuck.size(), 1u);
        EXPECT_EQ(a.stuck[0].rank, 3);
        EXPECT_EQ(a.stuck[0].commRank, 3);
        ASSERT_EQ(a.firstMissingCommunicator, 0);
        EXPECT_EQ(a.communicators[0].id, "pg 0 (default_pg)");
        EXPECT_EQ(a.hung[0]->slot.seq, 17u);
        EXPECT_EQ(a.hung[0]->collective, "all_reduce");
        EXPECT_EQ(waitingRanks(a, 0), (std::set<int>{0, 1, 2}));
        const hang::RankProgress& r3 = a.communicators[0].ranks[3];
        ASSERT_TRUE(r3.status);
        EXPECT_EQ(r3.status->completed, 16u);
        EXPECT_EQ(r3.status->tiedBy, "entries");
        const std::string t = text(a);
        EXPECT_NE(t.find("HANG: rank 3 never entered all_reduce #17 of pg 0 (default_pg), which ranks 0-2 have waited "
                         "in since"),
                  std::string::npos)
            << t;
        EXPECT_NE(t.find("rank 3: last completed #16 of pg 0 (default_pg) by its pg_status"), std::string::npos) << t;
    }
    // The same, but rank 2 entered 17 as an all-gather: a desync, nobody stuck.
    Dumps dumps;
    for (int r = 0; r < 4; ++r) {
        FrDumpSpec d;
        d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}};
        for (int s = 1; s <= 16; ++s) d.entries.push_back(frEntry(s, "completed"));
        d.entries.push_back(frEntry(17, "started", r == 2 ? "_allgather_base" : "all_reduce"));
        dumps.add(r, d, r % 2 == 1);
    }
    const hang::HangAnalysis b = dumps.analyze();
    EXPECT_EQ(b.verdict, hang::Verdict::Desync);
    ASSERT_EQ(b.desyncs.size(), 1u);
    EXPECT_EQ(b.desyncs[0].field, "collective");
    EXPECT_EQ(b.desyncs[0].slot.seq, 17u);
    EXPECT_TRUE(b.stuck.empty());
}

// A rank the group lists but no dump holds is stuck as far as anyone knows;
// sizes and dtypes that differ are desyncs; a coalesced call is one call.
TEST(FlightRecorderHang, MissingDumpsSizesAndCoalescedCalls) {
    Dumps dumps;
    for (int r = 0; r < 2; ++r) {
        FrDumpSpec d;
        d.groups = {{"0", {"default_pg", {0, 1, 2}}}};
        d.entries = {frEntry(1, "completed"),
                     frEntry(2, "completed", "all_gather", {{r == 1 ? 2048 : 1024}}),
                     frEntry(3, "completed", "broadcast"),
                     frEntry(3, "completed", "broadcast"),
                     frEntry(3, "completed", "coalesced", {}),
                     frEntry(4, "scheduled")};
        d.entries[2].dtype = r == 0 ? "Float" : "Int";  // same size, another type
        dumps.add(r, d, r == 1);
    }
    const hang::HangAnalysis a = dumps.analyze();
    EXPECT_EQ(a.verdict, hang::Verdict::Hang);
    ASSERT_EQ(a.stuck.size(), 1u);
    EXPECT_EQ(a.stuck[0].member, -1);  // in no input
    EXPECT_EQ(a.stuck[0].rank, 2);     // its global rank, from pg_config
    EXPECT_EQ(a.hung[0]->slot.seq, 4u);
    ASSERT_EQ(a.communicators[0].ranks[0].calls.size(), 4u);  // 1, 2, the coalesced 3, 4
    EXPECT_EQ(a.communicators[0].ranks[0].calls[2].collective, "broadcast (coalesced, 3 ops)");
    ASSERT_EQ(a.desyncs.size(), 2u);
    EXPECT_EQ(a.desyncs[0].field, "bytes");
    EXPECT_EQ(a.desyncs[0].slot.seq, 2u);
    EXPECT_EQ(*a.desyncs[0].parts[1].bytes, 8192u);
    EXPECT_EQ(a.desyncs[1].field, "dtype");
    EXPECT_NE(text(a).find("rank 2 (in no input) never entered all_reduce #4"), std::string::npos) << text(a);
}

// Dumps record no time of their own: the text gives no wait time (it would
// read 0 ns, the newest entry being the wait itself), and a call that one
// rank completed and another not is not said to be completed by none.
TEST(FlightRecorderHang, TheTextClaimsNoTimeAndNoCompletionTheDumpsDoNotHold) {
    Dumps stall;
    for (int r = 0; r < 3; ++r) {
        FrDumpSpec d;
        d.groups = {{"0", {"default_pg", {0, 1, 2}}}};
        d.entries = {frEntry(1, "completed")};
        if (r < 2) d.entries.push_back(frEntry(2, "started"));
        stall.add(r, d);
    }
    const hang::HangAnalysis stalled = stall.analyze();
    EXPECT_EQ(stalled.verdict, hang::Verdict::Hang);
    EXPECT_FALSE(stalled.endKnown);
    const std::string t = hang::formatHangText(stalled, true);
    EXPECT_NE(t.find("ranks 0 and 1 have waited in since"), std::string::npos) << t;
    EXPECT_EQ(t.find("before the inputs end)"), std::string::npos) << t;
    EXPECT_NE(t.find("2 waiting in all_reduce #2\n"), std::string::npos) << t;
    const auto json = nlohmann::json::parse(hang::formatHangJson(stalled));
    EXPECT_TRUE(json["communicators"][0]["hung"]["waited_ns"].is_null());
    EXPECT_EQ(json["communicators"][0]["hung"]["seq"], 2);

    Dumps caught;  // rank 0 completed #1, rank 1 has not yet: no one is stuck
    for (int r = 0; r < 2; ++r) {
        FrDumpSpec d;
        d.entries = {frEntry(1, r == 0 ? "completed" : "started")};
        caught.add(r, d);
    }
    const hang::HangAnalysis c = caught.analyze();
    EXPECT_EQ(c.verdict, hang::Verdict::Healthy);
    const std::string healthy = text(c);
    EXPECT_NE(healthy.find("rank 1 of pg 0 (default_pg) has not completed all_reduce #1, which the others completed"),
              std::string::npos)
        << healthy;
    EXPECT_EQ(healthy.find("none completed"), std::string::npos) << healthy;
}

// A long job's dumps hold only their newest entries, each rank's buffer
// starting elsewhere, some holding nothing of the hung group; pg_status says
// what they did. Four ranks of pg 0 and a tp group of ranks 2 and 3, worked
// by hand: ranks 0 and 1 wait in #5000 of pg 0; rank 2 entered #5000 too but
// its buffer holds only tp entries since (its status: 5000 enqueued, 4999
// completed); rank 3 completed #4999 and never entered #5000 (its buffer
// holds #4000-#4999, all completed). Only rank 3 is stuck.
TEST(FlightRecorderHang, PartialBuffersAreReadThroughTheStatusTable) {
    const auto job = [](bool rank2HasStatus, bool pickle) {
        Dumps dumps;
        for (int r = 0; r < 4; ++r) {
            FrDumpSpec d;
            d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}, {"1", {"tp", {2, 3}}}};
            if (r < 2) d.groups.erase("1");
            if (r < 2) {
                for (int s = 4990; s < 5000; ++s) d.entries.push_back(frEntry(s, "completed"));
                d.entries.push_back(frEntry(5000, "started"));
            } else if (r == 2) {
                for (int s = 1; s <= 30; ++s)
                    d.entries.push_back(in(frEntry(s, "completed", "all_gather"), "1", "tp", 1));
                d.status = std::map<int64_t, FrStatusSpec>{{0, {5000, -1, 4999}}, {1, {30, -1, 30}}};
                d.statusTable = rank2HasStatus;  // or a dump without pg_status
            } else {
                for (int s = 4000; s < 5000; ++s) d.entries.push_back(frEntry(s, "completed"));
                d.entries.push_back(in(frEntry(1, "completed", "all_gather"), "1", "tp", 1));
            }
            dumps.add(r, d, pickle && r % 2 == 0);
        }
        return dumps.analyze();
    };
    for (const bool pickle : {false, true}) {
        const hang::HangAnalysis a = job(true, pickle);
        EXPECT_EQ(a.verdict, hang::Verdict::Hang);
        EXPECT_EQ(stuckRanks(a), (std::set<int>{3}));
        size_t pg0 = 0;
        while (a.communicators[pg0].id != "pg 0 (default_pg)") ++pg0;
        ASSERT_TRUE(a.hung[pg0]);
        EXPECT_EQ(a.hung[pg0]->slot.seq, 5000u);
        EXPECT_EQ(waitingRanks(a, pg0), (std::set<int>{0, 1, 2}));  // rank 2 by its status alone
        const hang::RankProgress* r2 = nullptr;
        for (const auto& r : a.communicators[pg0].ranks)
            if (r.rank == 2) r2 = &r;
        ASSERT_NE(r2, nullptr);
        ASSERT_TRUE(r2->status);
        EXPECT_EQ(r2->status->tiedBy, "creation order");  // no pg 0 entry names its pg_id
        const std::string t = text(a);
        EXPECT_NE(t.find("HANG: rank 3 never entered all_reduce #5000 of pg 0 (default_pg), which ranks 0-2 have "
                         "waited in"),
                  std::string::npos)
            << t;
        EXPECT_NE(t.find("rank 3: last completed #4999 of pg 0 (default_pg) by its pg_status"), std::string::npos) << t;
        EXPECT_EQ(t.find("completed nothing"), std::string::npos) << t;
        EXPECT_LE(lines(t), 15u) << t;
    }
    // Without rank 2's pg_status nothing tells whether it entered
    // #5000: it is neither stuck nor waiting, and the verdict says so.
    const hang::HangAnalysis b = job(false, false);
    EXPECT_EQ(stuckRanks(b), (std::set<int>{3}));
    ASSERT_EQ(b.unknown.size(), 1u);
    EXPECT_EQ(b.unknown[0].rank, 2);
    EXPECT_NE(text(b).find("unknown: whether rank 2 of pg 0 (default_pg) entered"), std::string::npos) << text(b);
}

// The same dump with its entries reversed or shuffled says the same.
TEST(FlightRecorderHang, EntriesAreOrderedBySequenceNotByPlaceInTheFile) {
    std::mt19937 random(7);
    for (int order = 0; order < 3; ++order) {
        Dumps dumps;
        for (int r = 0; r < 3; ++r) {
            FrDumpSpec d;
            d.groups = {{"0", {"default_pg", {0, 1, 2}}}};
            for (int s = 1; s <= 20; ++s) d.entries.push_back(frEntry(s, "completed"));
            if (r != 1) d.entries.push_back(frEntry(21, "started"));
            if (order == 1) std::reverse(d.entries.begin(), d.entries.end());
            if (order == 2) std::shuffle(d.entries.begin(), d.entries.end(), random);
            d.status = std::map<int64_t, FrStatusSpec>{};  // no status: the entries alone must tell
            dumps.add(r, d, r == 2);
        }
        const hang::HangAnalysis a = dumps.analyze();
        EXPECT_EQ(a.verdict, hang::Verdict::Hang) << order;
        EXPECT_EQ(stuckRanks(a), (std::set<int>{1})) << order;
        ASSERT_TRUE(a.hung[0]);
        EXPECT_EQ(a.hung[0]->slot.seq, 21u);
        EXPECT_EQ(a.communicators[0].ranks[1].calls.back().slot.seq, 20u);
    }
}

// Mixture-of-experts all-to-alls: every rank sends its peers what its
// tokens need, so sizes differ per rank every step. Not a desync; what all
// send must still be what all receive, and a collective whose size rule is
// unknown is said as uncertain, never a desync.
TEST(FlightRecorderHang, UnevenAllToAllsAreNoDesync) {
    // Rank r sends (r + 1) * 256 elements in all and receives 640 - ... : totals 2560 each way.
    const std::vector<int64_t> sent = {256, 512, 768, 1024}, received = {1024, 768, 512, 256};
    const auto job = [&](int64_t skew, const std::string& op) {
        Dumps dumps;
        for (int r = 0; r < 4; ++r) {
            FrDumpSpec d;
            d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}, {"5", {"ep", {0, 1, 2, 3}}}};
            d.entries.push_back(frEntry(1, "completed"));
            FrEntrySpec a2a = in(frEntry(1, "completed", op, {{sent[static_cast<size_t>(r)]}}), "5", "ep", 1);
            a2a.outSizes = std::vector<std::vector<int64_t>>{{received[static_cast<size_t>(r)] + (r == 0 ? skew : 0)}};
            d.entries.push_back(a2a);
            d.entries.push_back(frEntry(2, "completed"));
            dumps.add(r, d, r >= 2);
        }
        return dumps.analyze();
    };
    const hang::HangAnalysis even = job(0, "all_to_all");
    EXPECT_EQ(even.verdict, hang::Verdict::Healthy) << text(even);
    EXPECT_TRUE(even.desyncs.empty());
    EXPECT_TRUE(even.uncertain.empty());
    // Rank 0 expects 64 more elements than anyone sends: said, not a desync.
    const hang::HangAnalysis skewed = job(64, "all_to_all");
    EXPECT_EQ(skewed.verdict, hang::Verdict::Healthy);
    EXPECT_TRUE(skewed.desyncs.empty());
    ASSERT_EQ(skewed.uncertain.size(), 1u);
    EXPECT_NE(skewed.uncertain[0].note.find("send 10.0 KiB and receive 10.2 KiB in all"), std::string::npos)
        << skewed.uncertain[0].note;
    EXPECT_NE(text(skewed).find("note: all_to_all #1 of pg 5 (ep)"), std::string::npos) << text(skewed);
    // A collective overlapscope has no rule for: uncertain too.
    const hang::HangAnalysis unknownOp = job(0, "my_custom_exchange");
    EXPECT_EQ(unknownOp.verdict, hang::Verdict::Healthy);
    ASSERT_EQ(unknownOp.uncertain.size(), 1u);
    EXPECT_NE(unknownOp.uncertain[0].note.find("not known here"), std::string::npos);
    // An all-reduce must be equal: that stays a desync.
    const hang::HangAnalysis reduce = job(0, "all_reduce");
    EXPECT_EQ(reduce.verdict, hang::Verdict::Desync);
    EXPECT_EQ(reduce.desyncs[0].field, "bytes");
}

// Sixteen ranks: pg 0 of all, four tp groups of four, two dp groups of
// eight. Rank 5 stalls before tp #41 (tp group 1 = ranks 4-7 waits), rank
// 13 before tp #41 of tp group 3 (ranks 12-15 wait, 14 and 15 have no
// dump). The verdict names both, in both groups, says who is absent, in
// few lines.
TEST(FlightRecorderHang, EveryStuckRankOfEveryGroupInAShortVerdict) {
    Dumps dumps;
    for (int r = 0; r < 16; ++r) {
        if (r == 14 || r == 15) continue;
        FrDumpSpec d;
        std::vector<int> all(16);
        for (int i = 0; i < 16; ++i) all[static_cast<size_t>(i)] = i;
        const int tp = r / 4, dp = r % 2;
        std::vector<int> tpRanks = {tp * 4, tp * 4 + 1, tp * 4 + 2, tp * 4 + 3}, dpRanks;
        for (int i = dp; i < 16; i += 2) dpRanks.push_back(i);
        const std::string tpName = std::to_string(1 + tp), dpName = std::to_string(5 + dp);
        d.groups = {{"0", {"default_pg", all}}, {tpName, {"tp", tpRanks}}, {dpName, {"dp", dpRanks}}};
        for (int s = 1; s <= 40; ++s) d.entries.push_back(in(frEntry(s, "completed", "all_gather"), tpName, "tp", 1));
        if (r != 5 && r != 13) d.entries.push_back(in(frEntry(41, "started", "all_gather"), tpName, "tp", 1));
        for (int s = 1; s <= 10; ++s) d.entries.push_back(in(frEntry(s, "completed"), dpName, "dp", 2));
        dumps.add(r, d, r % 3 == 0);
    }
    const hang::HangAnalysis a = dumps.analyze();
    EXPECT_EQ(a.verdict, hang::Verdict::Hang);
    EXPECT_EQ(stuckRanks(a, true), (std::set<int>{5, 13}));
    const std::vector<std::string> v = hang::verdictLines(a);
    ASSERT_FALSE(v.empty());
    EXPECT_LE(v.size(), 15u);
    EXPECT_NE(v[0].find("HANG: 2 groups wait for ranks 5 and 13-15:"), std::string::npos) << v[0];
    const std::string t = text(a);
    EXPECT_NE(t.find("pg 2 (tp): rank 5 never entered all_gather #41, which ranks 4, 6 and 7 have waited in"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("pg 4 (tp): rank 13 and ranks 14 and 15 (in no input) never entered all_gather #41, which rank "
                     "12 has waited in"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("not in the inputs: ranks 14 and 15"), std::string::npos) << t;
    EXPECT_LE(lines(t), 16u) << t;
}

// One rank's dump of an eight-rank group, everything completed: healthy as
// far as it goes, and it says what it does not hold.
TEST(FlightRecorderHang, ASingleRankOfEightIsNotHealthyWithoutAWord) {
    Dumps dumps;
    FrDumpSpec d;
    d.groups = {{"0", {"default_pg", {0, 1, 2, 3, 4, 5, 6, 7}}}};
    for (int s = 1; s <= 5; ++s) d.entries.push_back(frEntry(s, "completed"));
    dumps.add(0, d);
    const hang::HangAnalysis a = dumps.analyze();
    EXPECT_EQ(a.verdict, hang::Verdict::Healthy);
    const std::string t = text(a);
    EXPECT_NE(t.find("HEALTHY"), std::string::npos);
    EXPECT_NE(t.find("not in the inputs: ranks 1-7"), std::string::npos) << t;
}

// Two dumps of one rank (a dump taken twice, copied into one folder): the
// newer is read, once, and the verdict never has the rank on both sides.
TEST(FlightRecorderHang, TwoDumpsOfOneRankReadTheNewer) {
    Dumps dumps;
    for (int r = 0; r < 2; ++r) {
        FrDumpSpec d;
        d.entries = {frEntry(1, "completed"), frEntry(2, "completed")};
        if (r == 0) d.entries.push_back(frEntry(3, "started"));
        dumps.add(r, d);
    }
    FrDumpSpec newer;
    newer.entries = {frEntry(1, "completed"), frEntry(2, "completed"), frEntry(3, "started")};
    dumps.add(1, newer, true, "again_nccl_trace_rank_");
    const hang::HangAnalysis a = dumps.analyze();
    ASSERT_EQ(a.communicators.size(), 1u);
    EXPECT_EQ(a.communicators[0].ranks.size(), 2u);
    EXPECT_EQ(a.verdict, hang::Verdict::Healthy);  // both wait in #3: the collective itself is stuck
    EXPECT_EQ(waitingRanks(a, 0), (std::set<int>{0, 1}));
    std::string warnings;
    for (const auto& w : a.warnings) warnings += w + "\n";
    EXPECT_NE(warnings.find("are both dumps of rank 1: the newer"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("again_nccl_trace_rank_1) is read"), std::string::npos) << warnings;
}

// A dump whose name says rank 9 but whose group lists ranks 0-3: its
// entries of that group are left out, said once, and not read as a member.
TEST(FlightRecorderHang, ARankOutsideItsGroupIsLeftOutOfIt) {
    Dumps dumps;
    for (const int r : {0, 1, 9}) {
        FrDumpSpec d;
        d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}};
        d.entries = {frEntry(1, "completed"), frEntry(2, "started")};
        dumps.add(r, d);
    }
    const hang::HangAnalysis a = dumps.analyze();
    ASSERT_EQ(a.communicators.size(), 1u);
    EXPECT_EQ(a.communicators[0].ranks.size(), 2u);
    std::string warnings;
    for (const auto& w : a.warnings) warnings += w + "\n";
    EXPECT_NE(warnings.find("not one of pg 0 (default_pg)'s members"), std::string::npos) << warnings;
    EXPECT_EQ(stuckRanks(a), (std::set<int>{2, 3}));  // in no input; rank 9 is not taken for them
}

// Times no clock could give (INT64_MIN, INT64_MAX, 0) are unknown: never a
// negative wait, never an overflow (the sanitized build runs this too).
TEST(FlightRecorderHang, ImpossibleTimesAreUnknownNotNegative) {
    Dumps dumps;
    for (int r = 0; r < 2; ++r) {
        FrDumpSpec d;
        d.entries = {frEntry(1, "completed"), frEntry(2, "started")};
        if (r == 1) d.entries.pop_back();
        d.entries[0].createdNs = r == 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
        if (r == 0) d.entries[1].createdNs = std::numeric_limits<int64_t>::min();
        dumps.add(r, d, r == 1);
    }
    const hang::HangAnalysis a = dumps.analyze();
    EXPECT_EQ(a.verdict, hang::Verdict::Hang);
    EXPECT_EQ(stuckRanks(a), (std::set<int>{1}));
    ASSERT_TRUE(a.hung[0]);
    EXPECT_FALSE(a.hung[0]->sinceKnown);
    const std::string t = hang::formatHangText(a, true);
    EXPECT_EQ(t.find("since -"), std::string::npos) << t;
    EXPECT_EQ(t.find(" since "), std::string::npos) << t;
    const auto j = nlohmann::json::parse(hang::formatHangJson(a));
    EXPECT_TRUE(j["communicators"][0]["hung"]["waiting_since_ns"].is_null());
}

// --- Simulated jobs with a stalled rank -------------------------------------

// A job of R ranks in groups created in order (numeric names, each rank's
// pg_ids counting the groups it belongs to, as PyTorch assigns both).
// Every rank runs a random program of collectives on its groups, most of
// them asynchronous (the host enqueues and goes on, as with NCCL), some it
// waits for. A group's calls complete in order once all members entered.
// Rank `stall` stops before its k-th call. Run until nothing moves: who
// waits where, who never entered what, is then known. Dumps: each rank's
// newest few entries (a ring buffer, so a rank that went on may have lost
// the hung call's entry), some without pg_status, some shuffled, half
// pickles.
struct SimJob {
    int ranks = 0;
    std::vector<std::vector<int>> groups;  // members, by group index (name = index)
    struct Op {
        int group;
        int64_t seq;
        bool waits;
    };
    std::vector<std::vector<Op>> program;   // per rank
    std::vector<size_t> entered;            // per rank: calls entered
    std::vector<int64_t> completedThrough;  // per group
    bool enteredCall(int r, int g, int64_t seq) const {
        for (size_t i = 0; i < entered[static_cast<size_t>(r)]; ++i)
            if (program[static_cast<size_t>(r)][i].group == g && program[static_cast<size_t>(r)][i].seq == seq)
                return true;
        return false;
    }
};

SimJob simulate(std::mt19937& random) {
    SimJob j;
    j.ranks = 4 + static_cast<int>(random() % 9);
    std::vector<int> all(static_cast<size_t>(j.ranks));
    for (int r = 0; r < j.ranks; ++r) all[static_cast<size_t>(r)] = r;
    j.groups.push_back(all);
    const int extra = static_cast<int>(random() % 4);
    for (int g = 0; g < extra; ++g) {  // a partition of the ranks into groups
        const int size = 2 + static_cast<int>(random() % 3);
        std::vector<int> shuffled = all;
        std::shuffle(shuffled.begin(), shuffled.end(), random);
        for (size_t at = 0; at + static_cast<size_t>(size) <= shuffled.size(); at += static_cast<size_t>(size)) {
            std::vector<int> members(shuffled.begin() + static_cast<std::ptrdiff_t>(at),
                                     shuffled.begin() + static_cast<std::ptrdiff_t>(at) + size);
            std::sort(members.begin(), members.end());
            j.groups.push_back(members);
        }
    }
    // A program all members of a group agree on: calls on random groups.
    j.program.assign(static_cast<size_t>(j.ranks), {});
    std::vector<int64_t> next(j.groups.size(), 1);
    const int steps = 20 + static_cast<int>(random() % 60);
    for (int s = 0; s < steps; ++s) {
        const int g = static_cast<int>(random() % j.groups.size());
        for (int r : j.groups[static_cast<size_t>(g)])
            j.program[static_cast<size_t>(r)].push_back({g, next[static_cast<size_t>(g)], random() % 3 == 0});
        ++next[static_cast<size_t>(g)];
    }
    const int stall = static_cast<int>(random() % static_cast<uint32_t>(j.ranks));
    const size_t stallAt = random() % (j.program[static_cast<size_t>(stall)].size() + 1);
    j.entered.assign(static_cast<size_t>(j.ranks), 0);
    j.completedThrough.assign(j.groups.size(), 0);
    std::map<std::pair<int, int64_t>, size_t> arrived;
    for (bool moved = true; moved;) {
        moved = false;
        for (int r = 0; r < j.ranks; ++r) {
            auto& e = j.entered[static_cast<size_t>(r)];
            const auto& prog = j.program[static_cast<size_t>(r)];
            if (e >= prog.size() || (r == stall && e >= stallAt)) continue;
            if (e > 0 && prog[e - 1].waits &&
                j.completedThrough[static_cast<size_t>(prog[e - 1].group)] < prog[e - 1].seq)
                continue;  // the host waits for its last call
            const SimJob::Op& op = prog[e++];
            ++arrived[{op.group, op.seq}];
            moved = true;
        }
        for (size_t g = 0; g < j.groups.size(); ++g)  // completions, in order per group
            while (arrived[{static_cast<int>(g), j.completedThrough[g] + 1}] == j.groups[g].size()) {
                ++j.completedThrough[g];
                moved = true;
            }
    }
    return j;
}

TEST(FlightRecorderHang, SimulatedStallsNeverAccuseARankThatEnteredTheHungCall) {
    std::mt19937 random(2026);
    int hangs = 0;
    for (int round = 0; round < 60; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        const SimJob j = simulate(random);
        Dumps dumps;
        std::vector<bool> hasStatus(static_cast<size_t>(j.ranks));
        std::vector<std::set<int>> bufferGroups(static_cast<size_t>(j.ranks));
        std::vector<std::set<std::pair<int, int64_t>>> bufferCalls(static_cast<size_t>(j.ranks));
        for (int r = 0; r < j.ranks; ++r) {
            FrDumpSpec d;
            std::map<int, int64_t> pgId;  // this rank's groups in creation order
            for (size_t g = 0; g < j.groups.size(); ++g) {
                const auto& m = j.groups[g];
                if (!std::binary_search(m.begin(), m.end(), r)) continue;
                const int64_t id = static_cast<int64_t>(pgId.size());
                pgId[static_cast<int>(g)] = id;
                d.groups[std::to_string(g)] = {g == 0 ? "default_pg" : "sub", m};
            }
            const auto& prog = j.program[static_cast<size_t>(r)];
            const size_t entered = j.entered[static_cast<size_t>(r)];
            // A ring buffer of a few entries, never none once something was recorded.
            const size_t keep = random() % 3 == 0 ? 1 + static_cast<size_t>(random() % 5) : entered;
            for (size_t i = entered - std::min(keep, entered); i < entered; ++i) {
                const SimJob::Op& op = prog[i];
                const bool done = j.completedThrough[static_cast<size_t>(op.group)] >= op.seq;
                FrEntrySpec e = frEntry(op.seq, done ? "completed" : "started");
                e.createdNs = kT0 + static_cast<int64_t>(i) * 1'000'000;
                d.entries.push_back(
                    in(e, std::to_string(op.group), op.group == 0 ? "default_pg" : "sub", pgId.at(op.group)));
                bufferGroups[static_cast<size_t>(r)].insert(op.group);
                bufferCalls[static_cast<size_t>(r)].insert({op.group, op.seq});
            }
            std::map<int64_t, FrStatusSpec> status;
            for (size_t i = 0; i < entered; ++i) {
                FrStatusSpec& s = status[pgId.at(prog[i].group)];
                s.enqueued = prog[i].seq;
                const int64_t done = std::min(j.completedThrough[static_cast<size_t>(prog[i].group)], prog[i].seq);
                s.completed = done > 0 ? done : -1;
            }
            hasStatus[static_cast<size_t>(r)] = random() % 4 != 0;
            d.status = status;
            d.statusTable = hasStatus[static_cast<size_t>(r)];  // else a dump without pg_status
            if (random() % 2) std::shuffle(d.entries.begin(), d.entries.end(), random);
            dumps.add(r, d, random() % 2);
        }
        const hang::HangAnalysis a = dumps.analyze();
        // A rank's status is tied to its groups when its entries confirm
        // their order, or when it belongs to one group only.
        const auto statusTells = [&](int r) {
            size_t groupsOf = 0;
            for (const auto& m : j.groups) groupsOf += std::binary_search(m.begin(), m.end(), r);
            return hasStatus[static_cast<size_t>(r)] && (!bufferGroups[static_cast<size_t>(r)].empty() ||
                                                         (groupsOf == 1 && j.entered[static_cast<size_t>(r)] > 0));
        };
        for (size_t c = 0; c < a.communicators.size(); ++c) {
            const auto& comm = a.communicators[c];
            const int g = std::stoi(comm.id.substr(3));
            // Never a rank on both sides of a verdict.
            for (const auto& s : a.stuck) {
                if (s.communicator == static_cast<int>(c) && s.member >= 0 && a.hung[c]) {
                    EXPECT_EQ(std::count(a.hung[c]->waitingRanks.begin(), a.hung[c]->waitingRanks.end(), s.member), 0)
                        << hang::formatHangText(a, true);
                }
            }
            // The truth: the call of g the members wait in (where a dump
            // shows one of them in it), and who never entered it.
            std::optional<int64_t> waitSeq;
            const int64_t h = j.completedThrough[static_cast<size_t>(g)] + 1;
            for (int r : j.groups[static_cast<size_t>(g)])
                if (j.enteredCall(r, g, h) && (bufferCalls[static_cast<size_t>(r)].count({g, h}) || statusTells(r)))
                    waitSeq = h;
            for (const auto& s : a.stuck) {
                if (s.communicator != static_cast<int>(c) || s.member < 0) continue;
                ASSERT_TRUE(a.hung[c]);
                // Never a rank that entered the hung call.
                const int64_t hung = static_cast<int64_t>(a.hung[c]->slot.seq);
                EXPECT_FALSE(j.enteredCall(s.rank, g, hung))
                    << "rank " << s.rank << " entered " << comm.id << " #" << hung << "\n"
                    << hang::formatHangText(a, true);
            }
            if (!waitSeq) continue;
            ASSERT_TRUE(a.hung[c]) << comm.id;
            EXPECT_EQ(static_cast<int64_t>(a.hung[c]->slot.seq), *waitSeq) << comm.id;
            // Every member that never entered it, and whose dump can tell, is named.
            for (int r : j.groups[static_cast<size_t>(g)]) {
                const bool enteredIt = j.enteredCall(r, g, *waitSeq);
                const bool tells = bufferGroups[static_cast<size_t>(r)].count(g) || statusTells(r);
                if (enteredIt || !tells) continue;
                ++hangs;
                EXPECT_TRUE(std::any_of(
                    a.stuck.begin(), a.stuck.end(),
                    [&](const hang::StuckRank& s) { return s.rank == r && s.communicator == static_cast<int>(c); }))
                    << "rank " << r << " never entered " << comm.id << " #" << *waitSeq << "\n"
                    << hang::formatHangText(a, true);
            }
        }
        EXPECT_LE(hang::verdictLines(a).size(), 15u);
    }
    EXPECT_GT(hangs, 20);  // the rounds did make hangs to find
}

}  // namespace
}  // namespace osc

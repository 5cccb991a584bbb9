// `overlapscope hang` on PyTorch profiler traces that number collectives
// ("Process Group Name", "Seq" on record_param_comms and on kernels): one
// communicator per process group, calls named by Seq (docs/design.md 4d).
// The traces are written here, event by event; every expected value below is
// worked out from the scenario by hand, not read from the program.
#include "analyzer/hang/hang.h"
#include "analyzer/hang/hang_output.h"
#include "analyzer/load/load_capture.h"
#include "tests/analyzer/pytorch_seq_trace.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace osc {
namespace {

using nlohmann::json;
using test::ArgsOn;
using test::call;
using test::Coll;
using test::RankTrace;

constexpr int64_t kMs = RankTrace::kMs;
const Coll kWorld{"0", "[0, 1, 2, 3]", 4};
const Coll kPair{"1", "[1, 3]", 2};  // ranks 1 and 3 are its ranks 0 and 1

json analyzeJson(const std::vector<RankTrace>& ranks, const std::string& dir) {
    std::vector<std::string> files;
    for (const auto& r : ranks) files.push_back(r.write(dir));
    const Capture c = loadCaptures(files);
    return json::parse(hang::formatHangJson(hang::analyzeHang(&c, {})));
}

const json& communicator(const json& j, const std::string& id) {
    for (const auto& c : j.at("communicators"))
        if (c.at("id") == id) return c;
    static const json none;
    ADD_FAILURE() << "no communicator " << id << " in " << j.dump();
    return none;
}

std::set<int> stuckRanks(const json& j) {
    std::set<int> out;
    for (const auto& s : j.at("stuck_ranks")) out.insert(s.at("rank").get<int>());
    return out;
}

// Two groups on four ranks; rank 2 never calls the world group's Seq 3,
// which ranks 0, 1 and 3 launched and wait in. The pair group is complete.
TEST(HangPyTorchSeq, AStuckRankInOneOfTwoGroups) {
    testsupport::TempDir dir;
    std::vector<RankTrace> ranks;
    for (int r = 0; r < 4; ++r) {
        RankTrace t(r, 4, ArgsOn::Operator, true);
        const bool inPair = r == 1 || r == 3;
        t.add(call(kWorld, 1));
        if (inPair) t.add(call(kPair, 1, "allgather", 512));
        t.add(call(kWorld, 2));
        if (inPair) t.add(call(kPair, 2, "allgather", 512));
        if (r != 2) t.add(call(kWorld, 3, "allreduce", 1024, /*kernelRan=*/false));
        t.aliveUntil(5'000 * kMs);  // 4 s of waiting: past the 1 s of "in flight"
        ranks.push_back(std::move(t));
    }
    const json j = analyzeJson(ranks, dir.path());
    EXPECT_EQ(j.at("verdict"), "hang");
    EXPECT_EQ(j.at("first_missing"), json({{"communicator", "pg 0"}, {"seq", 3}, {"collective", "AllReduce"}}));
    EXPECT_EQ(stuckRanks(j), std::set<int>({2}));
    ASSERT_EQ(j.at("stuck_ranks").size(), 1u);
    EXPECT_EQ(j.at("stuck_ranks")[0].at("communicator"), "pg 0");
    EXPECT_EQ(j.at("stuck_ranks")[0].at("comm_rank"), 2);
    EXPECT_TRUE(j.at("desyncs").empty());
    ASSERT_EQ(j.at("communicators").size(), 2u);
    const json& world = communicator(j, "pg 0");
    EXPECT_EQ(world.at("source"), "pytorch-seq");
    EXPECT_EQ(world.at("size"), 4);
    EXPECT_EQ(world.at("seq_per_collective"), false);
    EXPECT_EQ(world.at("hung").at("waiting_ranks"), json({0, 1, 3}));
    const json& pair = communicator(j, "pg 1");
    EXPECT_EQ(pair.at("hung"), nullptr);
    EXPECT_EQ(pair.at("source"), "pytorch-seq");
    EXPECT_EQ(pair.at("size"), 2);
    ASSERT_EQ(pair.at("ranks").size(), 2u);
    // Global ranks 1 and 3 are the pair's ranks 0 and 1 ("Process Group Ranks").
    EXPECT_EQ(pair.at("ranks")[0].at("rank"), 1);
    EXPECT_EQ(pair.at("ranks")[0].at("comm_rank"), 0);
    EXPECT_EQ(pair.at("ranks")[1].at("rank"), 3);
    EXPECT_EQ(pair.at("ranks")[1].at("comm_rank"), 1);
}

// All four complete Seq 1-3 of one group, but rank 1 sends twice the
// elements at Seq 2 and rank 3 gathers instead of reducing at Seq 3.
// Arguments on the kernels only: no operators in these traces.
TEST(HangPyTorchSeq, DesyncsAtOneSeq) {
    testsupport::TempDir dir;
    std::vector<RankTrace> ranks;
    for (int r = 0; r < 4; ++r) {
        RankTrace t(r, 4, ArgsOn::Kernel, true);
        t.add(call(kWorld, 1));
        t.add(call(kWorld, 2, "allreduce", r == 1 ? 2048 : 1024));
        t.add(call(kWorld, 3, r == 3 ? "allgather" : "allreduce"));
        t.aliveUntil(5'000 * kMs);
        ranks.push_back(std::move(t));
    }
    const json j = analyzeJson(ranks, dir.path());
    EXPECT_EQ(j.at("verdict"), "desync");
    EXPECT_TRUE(j.at("stuck_ranks").empty());
    EXPECT_EQ(j.at("first_missing"), nullptr);
    ASSERT_EQ(j.at("desyncs").size(), 2u);
    EXPECT_EQ(j.at("desyncs")[0].at("communicator"), "pg 0");
    EXPECT_EQ(j.at("desyncs")[0].at("seq"), 2);
    EXPECT_EQ(j.at("desyncs")[0].at("field"), "bytes");
    EXPECT_EQ(j.at("desyncs")[1].at("seq"), 3);
    EXPECT_EQ(j.at("desyncs")[1].at("field"), "collective");
    const json& world = communicator(j, "pg 0");
    ASSERT_EQ(world.at("ranks").size(), 4u);
    // 1024 Floats are 4096 bytes; rank 1's 2048 are 8192.
    for (const auto& part : j.at("desyncs")[0].at("ranks"))
        EXPECT_EQ(part.at("bytes"), part.at("rank") == 1 ? 8192 : 4096) << part.dump();
}

// Rank 3's trace starts one collective later: its first kernel is Seq 58
// (16 KiB), the others' Seq 57 (4 KiB). Ranks 0, 1 and 3 then launch Seq 60,
// which rank 2 never calls.
std::vector<RankTrace> lateStart(bool withSeq) {
    std::vector<RankTrace> ranks;
    for (int r = 0; r < 4; ++r) {
        RankTrace t(r, 4, ArgsOn::Both, withSeq);
        if (r != 3) t.add(call(kWorld, 57, "allreduce", 1024));
        t.add(call(kWorld, 58, "allreduce", 4096));
        t.add(call(kWorld, 59, "allreduce", 1024));
        if (r != 2) t.add(call(kWorld, 60, "allreduce", 1024, /*kernelRan=*/false));
        t.aliveUntil(5'000 * kMs);
        ranks.push_back(std::move(t));
    }
    return ranks;
}

TEST(HangPyTorchSeq, ATraceStartingLaterIsComparedBySeq) {
    testsupport::TempDir dir;
    const json j = analyzeJson(lateStart(true), dir.path());
    EXPECT_EQ(j.at("verdict"), "hang");
    EXPECT_EQ(j.at("first_missing"), json({{"communicator", "pg 0"}, {"seq", 60}, {"collective", "AllReduce"}}));
    EXPECT_EQ(stuckRanks(j), std::set<int>({2}));
    EXPECT_TRUE(j.at("desyncs").empty());
    ASSERT_EQ(j.at("communicators").size(), 1u);
    for (const auto& r : communicator(j, "pg 0").at("ranks")) {
        const int rank = r.at("rank");
        EXPECT_EQ(r.at("last_completed").at("seq"), 59) << rank;
        EXPECT_EQ(r.at("last_entered").at("seq"), rank == 2 ? 59 : 60) << rank;
    }
}

// The same traces without "Seq" (as PyTorch 2.11 writes them) are numbered
// by each group's calls in trace order. Rank 3's trace starts one call later,
// so its #0 is really Seq 58 (16 KiB): ranks 0, 1, 2 call 4, 16, 4 KiB at
// #0-#2, rank 3 16, 4, 4 KiB; ranks 0 and 1 then launch #3 (Seq 60), which
// never ends, rank 3 its #2 (also Seq 60). Hand-worked: desyncs by size at
// #0 and #1; ranks 0 and 1 wait in #3, which ranks 2 and 3 never entered, so
// both read as stuck: order numbering cannot see that rank 3 only started
// later (Seq could; see ATraceStartingLaterIsComparedBySeq).
TEST(HangPyTorchSeq, WithoutSeqEachGroupIsNumberedInTraceOrder) {
    testsupport::TempDir dir;
    const json j = analyzeJson(lateStart(false), dir.path());
    ASSERT_EQ(j.at("communicators").size(), 1u);
    EXPECT_EQ(j.at("communicators")[0].at("id"), "pg 0");
    EXPECT_EQ(j.at("communicators")[0].at("source"), "pytorch-group-order");
    EXPECT_EQ(j.at("verdict"), "hang");
    EXPECT_EQ(j.at("first_missing"), json({{"communicator", "pg 0"}, {"seq", 3}, {"collective", "AllReduce"}}));
    EXPECT_EQ(stuckRanks(j), std::set<int>({2, 3}));
    ASSERT_EQ(j.at("desyncs").size(), 2u);
    EXPECT_EQ(j.at("desyncs")[0].at("seq"), 0);
    EXPECT_EQ(j.at("desyncs")[0].at("field"), "bytes");
    EXPECT_EQ(j.at("desyncs")[1].at("seq"), 1);
    EXPECT_EQ(j.at("desyncs")[1].at("field"), "bytes");
}

}  // namespace
}  // namespace osc

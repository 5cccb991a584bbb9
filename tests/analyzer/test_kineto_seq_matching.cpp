// Cross-rank matching of PyTorch profiler traces by (process group, Seq)
// (docs/metrics.md section 7): rank 1's trace starts one collective later
// than rank 0's, so matching by order would pair different calls. Traces are
// written event by event; the expected skews and transfers are worked out
// below from the times given.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "tests/analyzer/pytorch_seq_trace.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace osc {
namespace {

using test::ArgsOn;
using test::call;
using test::Coll;
using test::RankTrace;

const Coll kWorld{"0", "[0, 1]", 2};

// Rank 0: AllReduce Seq 57 [10000, 11000), 58 [20000, 21000), 59 [30000, 31000).
// Rank 1 (its trace starts later): Seq 58 [20400, 21200), 59 [30100, 31000).
// Rank 0 names Seq on its kernels, rank 1 on its operators only (`rank1Seq`).
Analysis analyzeLateStart(const std::string& dir, bool rank1Seq) {
    RankTrace r0(0, 2, ArgsOn::Kernel, true), r1(1, 2, ArgsOn::Operator, rank1Seq);
    r0.add(call(kWorld, 57), 9'000, 10'000, 1'000);
    r0.add(call(kWorld, 58), 19'000, 20'000, 1'000);
    r0.add(call(kWorld, 59), 29'000, 30'000, 1'000);
    r1.add(call(kWorld, 58), 19'500, 20'400, 800);
    r1.add(call(kWorld, 59), 29'500, 30'100, 900);
    if (!rank1Seq) {
        // Without Seq, the sizes come from the kernel's arguments: put them there.
        r1 = RankTrace(1, 2, ArgsOn::Both, false);
        r1.add(call(kWorld, 58), 19'500, 20'400, 800);
        r1.add(call(kWorld, 59), 29'500, 30'100, 900);
    }
    const Capture c = loadCaptures({r0.write(dir), r1.write(dir)});
    return analyze(c, {});
}

TEST(KinetoSeqMatching, ATraceStartingLaterIsMatchedBySeq) {
    testsupport::TempDir dir;
    const Analysis a = analyzeLateStart(dir.path(), true);
    ASSERT_EQ(a.devices.size(), 2u);
    ASSERT_EQ(a.matched.size(), 2u);
    // Seq 58: starts 20000 and 20400, skew 400; transfer 21000 - 20400 = 600.
    // Seq 59: starts 30000 and 30100, skew 100; transfer 31000 - 30100 = 900.
    EXPECT_EQ(a.matched[0].seqNumber, 58u);
    EXPECT_EQ(a.matched[0].skew_ns, 400);
    EXPECT_EQ(a.matched[0].transfer_ns, 600);
    EXPECT_EQ(a.matched[1].seqNumber, 59u);
    EXPECT_EQ(a.matched[1].skew_ns, 100);
    EXPECT_EQ(a.matched[1].transfer_ns, 900);
    for (const auto& m : a.matched) {
        EXPECT_EQ(m.collective, "AllReduce");
        EXPECT_EQ(m.commHash, a.matched[0].commHash);
        EXPECT_NE(m.commHash.value_or(0), 0u);
    }
    EXPECT_EQ(a.total_skew_ns, 500);
    // Each rank's place in the group and its size, from the trace's arguments.
    for (const auto& d : a.devices)
        for (const auto& op : d.collectives) {
            EXPECT_EQ(op.commRank, d.rank);
            EXPECT_EQ(op.commSize, 2);
        }
}

// One trace without Seq: its calls are numbered by their order in the trace
// (0 and 1), rank 0's by Seq (57-59). Different numberings of one group
// match nothing, and loading says so rather than pairing different calls.
TEST(KinetoSeqMatching, ATraceWithoutSeqBesideOneWithSeqMatchesNothingAndIsNamed) {
    testsupport::TempDir dir;
    RankTrace r0(0, 2, ArgsOn::Kernel, true), r1(1, 2, ArgsOn::Both, false);
    r0.add(call(kWorld, 57), 9'000, 10'000, 1'000);
    r0.add(call(kWorld, 58), 19'000, 20'000, 1'000);
    r1.add(call(kWorld, 58), 19'500, 20'400, 800);
    const Capture c = loadCaptures({r0.write(dir.path()), r1.write(dir.path())});
    EXPECT_TRUE(analyze(c, {}).matched.empty());
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_NE(c.warnings[0].find("not matched across ranks"), std::string::npos) << c.warnings[0];
}

// Both traces without Seq: each is numbered by its group's order, so two
// traces that start at the same call match call by call. Rank 0: [10000,
// 11000) and [20000, 21000); rank 1: [10300, 11200) and [20100, 21000).
// Skews 300 and 100; transfers 11000 - 10300 = 700 and 21000 - 20100 = 900.
TEST(KinetoSeqMatching, TracesWithoutSeqAreMatchedByGroupOrder) {
    testsupport::TempDir dir;
    RankTrace r0(0, 2, ArgsOn::Both, false), r1(1, 2, ArgsOn::Operator, false);
    r0.add(call(kWorld, 1), 9'000, 10'000, 1'000);
    r0.add(call(kWorld, 2), 19'000, 20'000, 1'000);
    r1.add(call(kWorld, 1), 9'500, 10'300, 900);
    r1.add(call(kWorld, 2), 19'500, 20'100, 900);
    const Analysis a = analyze(loadCaptures({r0.write(dir.path()), r1.write(dir.path())}), {});
    ASSERT_EQ(a.matched.size(), 2u);
    EXPECT_EQ(a.matched[0].seqNumber, 0u);
    EXPECT_EQ(a.matched[0].skew_ns, 300);
    EXPECT_EQ(a.matched[0].transfer_ns, 700);
    EXPECT_EQ(a.matched[1].seqNumber, 1u);
    EXPECT_EQ(a.matched[1].skew_ns, 100);
    EXPECT_EQ(a.matched[1].transfer_ns, 900);
    EXPECT_NE(a.matched[0].commHash.value_or(0), 0u);
}

// Without Seq, two groups interleaved alike on both ranks: each group is
// numbered on its own (world: 0, 1; pair "5": 0), kernels matched within
// their group. Rank 1 also has a second operator nested in its first world
// call, which is the same call: counted twice it would shift rank 1's world
// numbers and leave world #1 unmatched. Times (ns): rank 0 world [10000,
// 11000), pair [20000, 21000), world [30000, 31000); rank 1 the same calls at
// [10200, 11000), [20300, 21000), [30100, 31000): skews 200, 300, 100.
TEST(KinetoSeqMatching, WithoutSeqEachGroupIsNumberedApart) {
    testsupport::TempDir dir;
    const Coll pair{"5", "[0, 1]", 2};
    RankTrace r0(0, 2, ArgsOn::Both, false), r1(1, 2, ArgsOn::Both, false);
    r0.add(call(kWorld, 1), 9'000, 10'000, 1'000);
    r0.add(call(pair, 1), 19'000, 20'000, 1'000);
    r0.add(call(kWorld, 2), 29'000, 30'000, 1'000);
    r1.add(call(kWorld, 1), 9'500, 10'200, 800);
    r1.addNestedOperator(call(kWorld, 1), 9'550, 100);
    r1.add(call(pair, 1), 19'500, 20'300, 700);
    r1.add(call(kWorld, 2), 29'500, 30'100, 900);
    const Analysis a = analyze(loadCaptures({r0.write(dir.path()), r1.write(dir.path())}), {});
    ASSERT_EQ(a.matched.size(), 3u);
    std::map<std::pair<uint64_t, uint64_t>, int64_t> skew;  // (comm, seq) -> skew
    for (const auto& m : a.matched)
        skew[std::pair<uint64_t, uint64_t>(m.commHash.value_or(0), m.seqNumber.value_or(999))] =
            static_cast<int64_t>(m.skew_ns);
    const uint64_t world = a.matched[0].commHash.value_or(0);
    uint64_t other = 0;
    for (const auto& m : a.matched)
        if (m.commHash.value_or(0) != world) other = m.commHash.value_or(0);
    ASSERT_NE(other, 0u);
    EXPECT_EQ(skew.at({world, 0}), 200);
    EXPECT_EQ(skew.at({world, 1}), 100);
    EXPECT_EQ(skew.at({other, 0}), 300);
}

}  // namespace
}  // namespace osc

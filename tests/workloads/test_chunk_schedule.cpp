// The tensor-parallel chunk schedule: exact issue order, a hand-worked
// timeline, and the overlap property for many chunk counts and cost ratios.
#include <gtest/gtest.h>

#include <set>

#include "reference_workloads/support/chunk_schedule.h"

namespace oscwl {
namespace {

struct Expected {
    TpOp op;
    int chunk;
};

void expect_ops(const std::vector<ScheduledOp>& got, const std::vector<Expected>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].op, want[i].op) << i;
        EXPECT_EQ(got[i].chunk, want[i].chunk) << i;
        EXPECT_EQ(got[i].stream, want[i].op == TpOp::gemm ? StreamRole::compute : StreamRole::comm) << i;
    }
}

TEST(ChunkSchedule, SerialIsGatherGemmScatter) {
    auto s = plan_tp_chunks(1);
    expect_ops(s, {{TpOp::all_gather, 0}, {TpOp::gemm, 0}, {TpOp::reduce_scatter, 0}});
    EXPECT_EQ(s[1].waits_for, 0);
    EXPECT_EQ(s[2].waits_for, 1);
    auto t = simulate(s, 2, 3, 4);
    EXPECT_DOUBLE_EQ(t.back().end, 9.0);  // nothing overlaps
}

TEST(ChunkSchedule, ThreeChunksIssueOrder) {
    auto s = plan_tp_chunks(3);
    expect_ops(s, {{TpOp::all_gather, 0},
                   {TpOp::all_gather, 1},
                   {TpOp::all_gather, 2},
                   {TpOp::gemm, 0},
                   {TpOp::reduce_scatter, 0},
                   {TpOp::gemm, 1},
                   {TpOp::reduce_scatter, 1},
                   {TpOp::gemm, 2},
                   {TpOp::reduce_scatter, 2}});
    EXPECT_EQ(s[3].waits_for, 0);  // GEMM0 after AG0
    EXPECT_EQ(s[4].waits_for, 3);  // RS0 after GEMM0
    EXPECT_EQ(s[5].waits_for, 1);  // GEMM1 after AG1
    EXPECT_EQ(s[7].waits_for, 2);  // GEMM2 after AG2
    EXPECT_EQ(s[8].waits_for, 7);  // RS2 after GEMM2
}

TEST(ChunkSchedule, HandWorkedThreeChunkTimeline) {
    // Unit costs. comm: AG0 [0,1] AG1 [1,2] AG2 [2,3] RS0 [3,4] RS1 [4,5] RS2 [5,6];
    // compute: GEMM0 [1,2] GEMM1 [2,3] GEMM2 [3,4]. Serial would take 9.
    auto t = simulate(plan_tp_chunks(3), 1, 1, 1);
    const double want[][2] = {{0, 1}, {1, 2}, {2, 3}, {1, 2}, {3, 4}, {2, 3}, {4, 5}, {3, 4}, {5, 6}};
    ASSERT_EQ(t.size(), 9u);
    for (std::size_t i = 0; i < 9; ++i) {
        EXPECT_DOUBLE_EQ(t[i].start, want[i][0]) << i;
        EXPECT_DOUBLE_EQ(t[i].end, want[i][1]) << i;
    }
}

TEST(ChunkSchedule, HandWorkedTwoChunkTimeline) {
    // Unit costs. comm: AG0 [0,1] AG1 [1,2] RS0 [2,3] RS1 [3,4];
    // compute: GEMM0 [1,2] GEMM1 [2,3]. Serial would take 6.
    auto s = plan_tp_chunks(2);
    auto t = simulate(s, 1, 1, 1);
    const double want[][2] = {{0, 1}, {1, 2}, {1, 2}, {2, 3}, {2, 3}, {3, 4}};
    ASSERT_EQ(t.size(), 6u);
    for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_DOUBLE_EQ(t[i].start, want[i][0]) << i;
        EXPECT_DOUBLE_EQ(t[i].end, want[i][1]) << i;
    }
}

bool overlaps(const SimulatedOp& a, const SimulatedOp& b) { return a.start < b.end && b.start < a.end; }

TEST(ChunkSchedule, EveryChunksCommOverlapsAnotherChunksGemm) {
    const double ratios[][3] = {{1, 1, 1}, {3, 1, 3}, {1, 3, 1}, {1, 2, 5}, {5, 2, 1}};
    for (int chunks = 2; chunks <= 12; ++chunks) {
        auto s = plan_tp_chunks(chunks);
        // Coverage: one gather, one GEMM, one scatter per chunk.
        std::multiset<std::pair<int, int>> seen;
        for (const ScheduledOp& op : s) seen.insert({static_cast<int>(op.op), op.chunk});
        for (int c = 0; c < chunks; ++c)
            for (int k = 0; k < 3; ++k) EXPECT_EQ(seen.count({k, c}), 1u);
        for (const auto& r : ratios) {
            auto t = simulate(s, r[0], r[1], r[2]);
            for (int c = 0; c < chunks; ++c) {
                bool hidden = false;
                for (std::size_t i = 0; i < s.size(); ++i) {
                    if (s[i].chunk != c || s[i].op == TpOp::gemm) continue;
                    for (std::size_t j = 0; j < s.size(); ++j)
                        if (s[j].op == TpOp::gemm && s[j].chunk != c && overlaps(t[i], t[j])) hidden = true;
                }
                EXPECT_TRUE(hidden) << "chunk " << c << " of " << chunks << " ratio " << r[0] << ":" << r[1];
            }
            // Pipelining never loses against the serial sum.
            EXPECT_LT(t.back().end, chunks * (r[0] + r[1] + r[2]));
        }
    }
}

TEST(ChunkSchedule, DependenciesPointBackwardsToTheSameChunk) {
    auto s = plan_tp_chunks(5);
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i].waits_for < 0) {
            EXPECT_EQ(s[i].op, TpOp::all_gather);
            continue;
        }
        ASSERT_LT(static_cast<std::size_t>(s[i].waits_for), i);
        const ScheduledOp& dep = s[static_cast<std::size_t>(s[i].waits_for)];
        EXPECT_EQ(dep.chunk, s[i].chunk);
        EXPECT_NE(dep.stream, s[i].stream);
    }
}

TEST(ChunkSchedule, ChunkRangesCoverExactly) {
    for (long long total : {1LL, 7LL, 64LL, 1000LL})
        for (int chunks = 1; chunks <= 9; ++chunks) {
            long long next = 0;
            for (int c = 0; c < chunks; ++c) {
                ChunkRange r = chunk_range(total, chunks, c);
                EXPECT_EQ(r.offset, next);
                EXPECT_GE(r.count, total / chunks);
                EXPECT_LE(r.count, total / chunks + 1);
                next += r.count;
            }
            EXPECT_EQ(next, total);
        }
    EXPECT_EQ(chunk_range(10, 4, 0).count, 3);
    EXPECT_EQ(chunk_range(10, 4, 3).offset, 8);
}

}  // namespace
}  // namespace oscwl

// The expert-parallel all-to-all plan of moe_alltoall: hand-worked token
// counts with and without imbalance, pieces and receive blocks tiling their
// buffers, and a simulated dispatch and combine that must send every token to
// its expert and back to its owner, in its place.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include "reference_workloads/support/alltoall_plan.h"

namespace oscwl {
namespace {

using Counts = std::vector<std::vector<long long>>;

TEST(AllToAllPlan, HandWorkedBalancedThreeRanks) {
    // Rank s sends its token i to expert (s + i) mod 3; 10 tokens each:
    // rank 0 -> experts 0,1,2,0,1,2,0,1,2,0 = 4,3,3 tokens.
    AllToAllPlan p = plan_alltoall(3, 10, 1.0, 1);
    EXPECT_EQ(p.tokens, (std::vector<long long>{10, 10, 10}));
    EXPECT_EQ(p.counts, (Counts{{4, 3, 3}, {3, 4, 3}, {3, 3, 4}}));
    EXPECT_EQ(p.received(0), 10);
    EXPECT_EQ(p.segment_offset(1, 2), 7);  // 3 + 4 tokens for experts 0 and 1 first
    EXPECT_DOUBLE_EQ(p.send_imbalance(), 1.0);
}

TEST(AllToAllPlan, HandWorkedImbalanceOnRankZero) {
    // --imbalance 3 with 100 tokens: rank 0 holds 300, split 150/150; rank 1
    // holds 100, split 50/50. Each expert gets 200; rank 0 sends 300 of 400:
    // max/mean = 300/200.
    AllToAllPlan p = plan_alltoall(2, 100, 3.0, 1);
    EXPECT_EQ(p.tokens, (std::vector<long long>{300, 100}));
    EXPECT_EQ(p.counts, (Counts{{150, 150}, {50, 50}}));
    EXPECT_EQ(p.received(0), 200);
    EXPECT_EQ(p.received(1), 200);
    EXPECT_DOUBLE_EQ(p.send_imbalance(), 1.5);
    // Fractions round to the nearest token; odd counts keep the extra token local.
    AllToAllPlan q = plan_alltoall(2, 7, 2.5, 1);
    EXPECT_EQ(q.tokens, (std::vector<long long>{18, 7}));
    EXPECT_EQ(q.counts, (Counts{{9, 9}, {3, 4}}));
    EXPECT_THROW(plan_alltoall(2, 7, 0.5, 1), std::invalid_argument);
    EXPECT_THROW(plan_alltoall(2, 7, 1.0, 0), std::invalid_argument);
}

TEST(AllToAllPlan, HandWorkedChunkBlocks) {
    // 2 ranks, 7 tokens, 2 chunks: segments {4,3} and {3,4}. Pieces of 4 are
    // 2+2, of 3 are 2+1. Expert 0 receives chunk 0 = [r0: 2, r1: 2], chunk 1 =
    // [r0: 2, r1: 1].
    AllToAllPlan p = plan_alltoall(2, 7, 1.0, 2);
    EXPECT_EQ(p.piece(0, 0, 1).offset, 2);
    EXPECT_EQ(p.piece(1, 0, 1).count, 1);
    EXPECT_EQ(p.block_tokens(0, 0), 4);
    EXPECT_EQ(p.block_tokens(0, 1), 3);
    EXPECT_EQ(p.recv_offset(0, 0, 1), 2);
    EXPECT_EQ(p.recv_offset(0, 1, 0), 4);
    EXPECT_EQ(p.recv_offset(0, 1, 1), 6);
    EXPECT_EQ(p.block_offset(1, 1), 4);
}

TEST(AllToAllPlan, CountsSumAndBuffersTile) {
    for (int world = 1; world <= 6; ++world)
        for (long long tokens : {1LL, 5LL, 64LL, 1001LL})
            for (double imb : {1.0, 1.7, 4.0})
                for (int chunks : {1, 3, 4}) {
                    AllToAllPlan p = plan_alltoall(world, tokens, imb, chunks);
                    long long all = 0;
                    for (int s = 0; s < world; ++s) {
                        long long row = 0;
                        for (int d = 0; d < world; ++d) {
                            row += p.counts[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
                            long long covered = 0;
                            for (int c = 0; c < chunks; ++c) {
                                EXPECT_EQ(p.piece(s, d, c).offset, covered);
                                covered += p.piece(s, d, c).count;
                            }
                            EXPECT_EQ(covered, p.counts[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)]);
                        }
                        EXPECT_EQ(row, p.tokens[static_cast<std::size_t>(s)]);
                        all += row;
                    }
                    long long received = 0;
                    for (int d = 0; d < world; ++d) {
                        long long at = 0;
                        for (int c = 0; c < chunks; ++c)
                            for (int s = 0; s < world; ++s) {
                                EXPECT_EQ(p.recv_offset(d, c, s), at);
                                at += p.piece(s, d, c).count;
                            }
                        EXPECT_EQ(at, p.received(d));
                        received += at;
                    }
                    EXPECT_EQ(received, all);
                    EXPECT_EQ(p.tokens[0], std::llround(imb * static_cast<double>(tokens)));
                }
}

TEST(AllToAllPlan, DispatchAndCombineReturnEveryTokenToItsOwner) {
    // Token (owner, position); the dispatch copies pieces exactly as the
    // program's grouped sends and receives do, the "expert" tags each token
    // with its rank, the combine copies back.
    using Token = std::tuple<int, long long, int>;  // owner, position, expert that saw it
    for (int world : {1, 2, 3, 5})
        for (int chunks : {1, 2, 4}) {
            AllToAllPlan p = plan_alltoall(world, 23, 2.0, chunks);
            std::vector<std::vector<Token>> recv(static_cast<std::size_t>(world)), out(static_cast<std::size_t>(world));
            for (int d = 0; d < world; ++d)
                recv[static_cast<std::size_t>(d)].resize(static_cast<std::size_t>(p.received(d)));
            for (int s = 0; s < world; ++s)
                out[static_cast<std::size_t>(s)].resize(
                    static_cast<std::size_t>(p.tokens[static_cast<std::size_t>(s)]));
            for (int c = 0; c < chunks; ++c)
                for (int s = 0; s < world; ++s)
                    for (int d = 0; d < world; ++d) {
                        const ChunkRange piece = p.piece(s, d, c);
                        for (long long i = 0; i < piece.count; ++i) {
                            const long long from = p.segment_offset(s, d) + piece.offset + i;
                            recv[static_cast<std::size_t>(d)][static_cast<std::size_t>(p.recv_offset(d, c, s) + i)] = {
                                s, from, d};
                        }
                    }
            for (int c = 0; c < chunks; ++c)
                for (int d = 0; d < world; ++d)
                    for (int s = 0; s < world; ++s) {
                        const ChunkRange piece = p.piece(s, d, c);
                        for (long long i = 0; i < piece.count; ++i)
                            out[static_cast<std::size_t>(s)][static_cast<std::size_t>(p.segment_offset(s, d) +
                                                                                      piece.offset + i)] =
                                recv[static_cast<std::size_t>(d)][static_cast<std::size_t>(p.recv_offset(d, c, s) + i)];
                    }
            for (int s = 0; s < world; ++s)
                for (long long j = 0; j < p.tokens[static_cast<std::size_t>(s)]; ++j) {
                    const auto [owner, position, expert] =
                        out[static_cast<std::size_t>(s)][static_cast<std::size_t>(j)];
                    EXPECT_EQ(owner, s);
                    EXPECT_EQ(position, j);
                    // Position j lies in the segment of the expert that processed it.
                    EXPECT_GE(j, p.segment_offset(s, expert));
                    EXPECT_LT(j, p.segment_offset(s, expert) +
                                     p.counts[static_cast<std::size_t>(s)][static_cast<std::size_t>(expert)]);
                }
        }
}

}  // namespace
}  // namespace oscwl

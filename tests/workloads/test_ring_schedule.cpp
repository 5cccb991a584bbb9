// The ring-exchange plan of tp_overlap --mode ring: hand-worked orders, and
// a simulation of the ring that moves chunks and partial sums exactly as the
// program does (send to next, receive from prev) and checks what arrives.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "reference_workloads/support/ring_schedule.h"

namespace oscwl {
namespace {

TEST(RingSchedule, HandWorkedFourRanks) {
    // Rank 1 multiplies its own chunk first, then what rank 0 held, ...;
    // its partial sums start with chunk 0 and end with its own chunk 1.
    RingPlan p = plan_ring(4, 1, 99);
    EXPECT_FALSE(p.loopback);
    EXPECT_EQ(p.positions, 4);
    EXPECT_EQ(p.next, 2);
    EXPECT_EQ(p.prev, 0);
    EXPECT_EQ(p.gather_order, (std::vector<int>{1, 0, 3, 2}));
    EXPECT_EQ(p.scatter_order, (std::vector<int>{0, 3, 2, 1}));
    EXPECT_EQ(p.exchanges_per_ring(), 3);
    RingPlan last = plan_ring(4, 3, 1);
    EXPECT_EQ(last.next, 0);
    EXPECT_EQ(last.prev, 2);
    EXPECT_EQ(last.gather_order, (std::vector<int>{3, 2, 1, 0}));
    EXPECT_EQ(last.scatter_order, (std::vector<int>{2, 1, 0, 3}));
}

TEST(RingSchedule, TwoRanksSwapOnce) {
    RingPlan r0 = plan_ring(2, 0, 4), r1 = plan_ring(2, 1, 4);
    EXPECT_EQ(r0.gather_order, (std::vector<int>{0, 1}));
    EXPECT_EQ(r1.gather_order, (std::vector<int>{1, 0}));
    EXPECT_EQ(r0.scatter_order, (std::vector<int>{1, 0}));
    EXPECT_EQ(r1.scatter_order, (std::vector<int>{0, 1}));
    EXPECT_EQ(r0.next, 1);
    EXPECT_EQ(r0.prev, 1);
    EXPECT_EQ(r0.exchanges_per_ring(), 1);
}

TEST(RingSchedule, OneRankLoopsBackOverItsSlices) {
    RingPlan p = plan_ring(1, 0, 4);
    EXPECT_TRUE(p.loopback);
    EXPECT_EQ(p.positions, 4);
    EXPECT_EQ(p.next, 0);
    EXPECT_EQ(p.prev, 0);
    EXPECT_EQ(p.gather_order, (std::vector<int>{0, 3, 2, 1}));
    EXPECT_EQ(p.scatter_order, (std::vector<int>{3, 2, 1, 0}));  // ends with slice 0, kept local
    EXPECT_EQ(p.exchanges_per_ring(), 3);
    RingPlan one = plan_ring(1, 0, 1);
    EXPECT_EQ(one.gather_order, (std::vector<int>{0}));
    EXPECT_EQ(one.exchanges_per_ring(), 0);
    EXPECT_THROW(plan_ring(2, 2, 1), std::invalid_argument);
    EXPECT_THROW(plan_ring(1, 0, 0), std::invalid_argument);
}

TEST(RingSchedule, SimulatedRingDeliversEveryChunkAndEverySum) {
    for (int world = 2; world <= 7; ++world) {
        std::vector<RingPlan> plans;
        for (int r = 0; r < world; ++r) plans.push_back(plan_ring(world, r, 1));
        // Gather: step 0 holds the own chunk; each exchange moves what a rank
        // holds to its next rank.
        std::vector<int> held(static_cast<std::size_t>(world));
        for (int r = 0; r < world; ++r) held[static_cast<std::size_t>(r)] = r;
        std::vector<std::set<int>> seen(static_cast<std::size_t>(world));
        for (int i = 0; i < world; ++i) {
            for (int r = 0; r < world; ++r) {
                const auto& p = plans[static_cast<std::size_t>(r)];
                ASSERT_EQ(p.gather_order[static_cast<std::size_t>(i)], held[static_cast<std::size_t>(r)])
                    << "world " << world << " rank " << r << " step " << i;
                seen[static_cast<std::size_t>(r)].insert(held[static_cast<std::size_t>(r)]);
            }
            std::vector<int> arrived(held.size());
            for (int r = 0; r < world; ++r)
                arrived[static_cast<std::size_t>(plans[static_cast<std::size_t>(r)].next)] =
                    held[static_cast<std::size_t>(r)];
            for (int r = 0; r < world; ++r)
                EXPECT_EQ(plans[static_cast<std::size_t>(r)].prev,
                          (r + world - 1) % world);  // the sender of what arrives
            held = arrived;
        }
        for (const auto& s : seen) EXPECT_EQ(static_cast<int>(s.size()), world) << "world " << world;
        // Scatter: a partial sum is (chunk, contributing ranks); each step adds
        // this rank's product of the chunk to what came from prev.
        struct Partial {
            int chunk = -1;
            std::set<int> ranks;
        };
        std::vector<Partial> incoming(static_cast<std::size_t>(world));
        for (int k = 0; k < world; ++k) {
            std::vector<Partial> out(static_cast<std::size_t>(world));
            for (int r = 0; r < world; ++r) {
                const int chunk = plans[static_cast<std::size_t>(r)].scatter_order[static_cast<std::size_t>(k)];
                Partial p;
                if (k > 0) {
                    p = incoming[static_cast<std::size_t>(r)];
                    ASSERT_EQ(p.chunk, chunk) << "world " << world << " rank " << r << " step " << k;
                }
                p.chunk = chunk;
                EXPECT_TRUE(p.ranks.insert(r).second);
                out[static_cast<std::size_t>(plans[static_cast<std::size_t>(r)].next)] = p;
                if (k == world - 1) {
                    EXPECT_EQ(p.chunk, r) << "the last sum is the own chunk";
                    EXPECT_EQ(static_cast<int>(p.ranks.size()), world) << "every rank contributed";
                }
            }
            incoming = out;
        }
    }
}

}  // namespace
}  // namespace oscwl

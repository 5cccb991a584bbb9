// FSDP gather schedule: hand-worked plan and safety/lookahead properties.
#include <gtest/gtest.h>

#include "reference_workloads/support/prefetch_schedule.h"

namespace oscwl {
namespace {

TEST(PrefetchPlan, UsesAreForwardThenBackward) {
    auto p = plan_prefetch(3, 0);
    ASSERT_EQ(p.uses.size(), 6u);
    const int layers[] = {0, 1, 2, 2, 1, 0};
    for (std::size_t u = 0; u < 6; ++u) {
        EXPECT_EQ(p.uses[u].layer, layers[u]);
        EXPECT_EQ(p.uses[u].backward, u >= 3);
    }
}

TEST(PrefetchPlan, HandWorkedTwoLayersPrefetchOne) {
    auto p = plan_prefetch(2, 1);
    EXPECT_EQ(p.slots, 2);
    ASSERT_EQ(p.before.size(), 4u);
    ASSERT_EQ(p.before[0].size(), 2u);  // gathers for uses 0 and 1 before use 0
    EXPECT_EQ(p.before[0][0].use, 0);
    EXPECT_EQ(p.before[0][0].slot, 0);
    EXPECT_EQ(p.before[0][0].wait_compute, -1);
    EXPECT_EQ(p.before[0][1].use, 1);
    EXPECT_EQ(p.before[0][1].slot, 1);
    EXPECT_EQ(p.before[0][1].wait_compute, -1);
    ASSERT_EQ(p.before[1].size(), 1u);  // use 2 into slot 0 once use 0 computed
    EXPECT_EQ(p.before[1][0].use, 2);
    EXPECT_EQ(p.before[1][0].slot, 0);
    EXPECT_EQ(p.before[1][0].wait_compute, 0);
    ASSERT_EQ(p.before[2].size(), 1u);
    EXPECT_EQ(p.before[2][0].use, 3);
    EXPECT_EQ(p.before[2][0].wait_compute, 1);
    EXPECT_TRUE(p.before[3].empty());
}

TEST(PrefetchPlan, NoPrefetchSerialisesGatherAndCompute) {
    auto p = plan_prefetch(4, 0);
    for (std::size_t u = 0; u < p.uses.size(); ++u) {
        ASSERT_EQ(p.before[u].size(), 1u);
        EXPECT_EQ(p.before[u][0].use, static_cast<int>(u));
        EXPECT_EQ(p.before[u][0].wait_compute, static_cast<int>(u) - 1);
    }
}

TEST(PrefetchPlan, PropertiesForAllDepths) {
    for (int layers = 1; layers <= 9; ++layers)
        for (int k = 0; k <= 2; ++k) {
            auto p = plan_prefetch(layers, k);
            const int n = 2 * layers;
            std::vector<int> issued_at(static_cast<std::size_t>(n), -1);
            for (int u = 0; u < n; ++u)
                for (const GatherIssue& g : p.before[static_cast<std::size_t>(u)]) {
                    ASSERT_EQ(issued_at[static_cast<std::size_t>(g.use)], -1) << "gathered twice";
                    issued_at[static_cast<std::size_t>(g.use)] = u;
                    EXPECT_EQ(g.slot, g.use % (k + 1));
                    // The slot's previous user must be finished, and that
                    // compute is already issued when the gather is.
                    const int prev = g.use - (k + 1);
                    EXPECT_EQ(g.wait_compute, prev >= 0 ? prev : -1);
                    EXPECT_LT(g.wait_compute, u);
                }
            for (int j = 0; j < n; ++j) {
                const int at = issued_at[static_cast<std::size_t>(j)];
                ASSERT_GE(at, 0) << "use " << j << " never gathered";
                EXPECT_LE(at, j);                      // before it is needed
                EXPECT_EQ(at, j - k > 0 ? j - k : 0);  // exactly k uses ahead
            }
            // Between a gather into a slot and its use, no other use reads that slot.
            for (int j = 0; j < n; ++j)
                for (int v = issued_at[static_cast<std::size_t>(j)]; v < j; ++v) {
                    EXPECT_NE(p.slot_of(v), p.slot_of(j)) << "layers " << layers << " k " << k;
                }
        }
}

}  // namespace
}  // namespace oscwl

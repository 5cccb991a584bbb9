// DDP bucket assignment: hand-worked examples and properties over random sizes.
#include <gtest/gtest.h>

#include <limits>
#include <numeric>
#include <random>

#include "reference_workloads/support/bucket_plan.h"

namespace oscwl {
namespace {

std::vector<std::vector<int>> params_of(const std::vector<Bucket>& buckets) {
    std::vector<std::vector<int>> out;
    for (const Bucket& b : buckets) out.push_back(b.params);
    return out;
}

TEST(BucketPlan, EqualLayersTwoPerBucket) {
    auto b = plan_buckets({4, 4, 4, 4}, 8);
    EXPECT_EQ(params_of(b), (std::vector<std::vector<int>>{{3, 2}, {1, 0}}));
    EXPECT_EQ(b[0].bytes, 8u);
    EXPECT_EQ(b[1].offset, 8u);
    EXPECT_EQ(b[0].ready_after(), 2);
    EXPECT_EQ(b[1].ready_after(), 0);
}

TEST(BucketPlan, HandWorkedMixedSizes) {
    // Reverse order: 5 | 4 (5+4 > 6) | 3, 2, 1 (3+2+1 = 6 fits exactly).
    auto b = plan_buckets({1, 2, 3, 4, 5}, 6);
    EXPECT_EQ(params_of(b), (std::vector<std::vector<int>>{{4}, {3}, {2, 1, 0}}));
    EXPECT_EQ(b[0].bytes, 5u);
    EXPECT_EQ(b[1].bytes, 4u);
    EXPECT_EQ(b[2].bytes, 6u);
    EXPECT_EQ(b[0].offset, 0u);
    EXPECT_EQ(b[1].offset, 5u);
    EXPECT_EQ(b[2].offset, 9u);
}

TEST(BucketPlan, OversizedParameterGetsItsOwnBucket) {
    auto b = plan_buckets({2, 10, 2}, 4);
    EXPECT_EQ(params_of(b), (std::vector<std::vector<int>>{{2}, {1}, {0}}));
    EXPECT_EQ(b[1].bytes, 10u);
}

TEST(BucketPlan, CapZeroIsPerParameterAndMaxIsOneBucket) {
    EXPECT_EQ(params_of(plan_buckets({3, 3, 3}, 0)), (std::vector<std::vector<int>>{{2}, {1}, {0}}));
    auto one = plan_buckets({3, 3, 3}, std::numeric_limits<std::size_t>::max());
    EXPECT_EQ(params_of(one), (std::vector<std::vector<int>>{{2, 1, 0}}));
    EXPECT_EQ(one[0].bytes, 9u);
    EXPECT_TRUE(plan_buckets({}, 8).empty());
}

TEST(BucketPlan, ReverseLayoutOffsets) {
    EXPECT_EQ(reverse_layout_offsets({1, 2, 3, 4}), (std::vector<std::size_t>{9, 7, 4, 0}));
}

TEST(BucketPlan, PropertiesOverRandomModels) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 2000; ++trial) {
        const int n = std::uniform_int_distribution<int>(1, 40)(rng);
        std::vector<std::size_t> sizes(static_cast<std::size_t>(n));
        for (auto& s : sizes) s = std::uniform_int_distribution<std::size_t>(1, 100)(rng);
        const std::size_t cap = std::uniform_int_distribution<std::size_t>(0, 300)(rng);
        auto buckets = plan_buckets(sizes, cap);
        auto offsets = reverse_layout_offsets(sizes);

        // Concatenated, the buckets list every parameter once, last layer first.
        std::vector<int> order;
        for (const Bucket& b : buckets) order.insert(order.end(), b.params.begin(), b.params.end());
        std::vector<int> expected(static_cast<std::size_t>(n));
        std::iota(expected.rbegin(), expected.rend(), 0);
        ASSERT_EQ(order, expected) << "trial " << trial;

        std::size_t running = 0;
        for (std::size_t i = 0; i < buckets.size(); ++i) {
            const Bucket& b = buckets[i];
            ASSERT_FALSE(b.params.empty());
            std::size_t sum = 0;
            for (int p : b.params) sum += sizes[static_cast<std::size_t>(p)];
            EXPECT_EQ(b.bytes, sum);
            EXPECT_TRUE(b.bytes <= cap || b.params.size() == 1) << "trial " << trial;
            // Contiguous slices of the reverse-ordered flat buffer.
            EXPECT_EQ(b.offset, running);
            EXPECT_EQ(b.offset, offsets[static_cast<std::size_t>(b.params.front())]);
            running += b.bytes;
            // Greedy: the next bucket's first parameter did not fit here.
            if (i + 1 < buckets.size()) {
                EXPECT_GT(b.bytes + sizes[static_cast<std::size_t>(buckets[i + 1].params.front())], cap);
            }
        }
    }
}

}  // namespace
}  // namespace oscwl

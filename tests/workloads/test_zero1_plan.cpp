// ZeRO-1 shards of the DDP buckets: hand-worked offsets, gather order and
// the layer each forward waits for.
#include <gtest/gtest.h>

#include "reference_workloads/support/zero1_plan.h"

namespace oscwl {
namespace {

constexpr std::size_t kMiB = 1u << 20;

TEST(Zero1Plan, HandWorkedFourLayersTwoBucketsTwoRanks) {
    // 4 layers of 4 MiB, cap 8 MiB: bucket 0 = layers 3, 2 at [0, 8 MiB),
    // bucket 1 = layers 1, 0 at [8, 16 MiB). 2 ranks: 4 MiB shards.
    auto buckets = plan_buckets({4 * kMiB, 4 * kMiB, 4 * kMiB, 4 * kMiB}, 8 * kMiB);
    ASSERT_EQ(buckets.size(), 2u);
    Zero1Plan p = plan_zero1(buckets, 4, 2);
    EXPECT_EQ(p.shard_bytes, (std::vector<std::size_t>{4 * kMiB, 4 * kMiB}));
    EXPECT_EQ(p.shard_offset(0, 0), 0u);
    EXPECT_EQ(p.shard_offset(0, 1), 4 * kMiB);
    EXPECT_EQ(p.shard_offset(1, 0), 8 * kMiB);
    EXPECT_EQ(p.shard_offset(1, 1), 12 * kMiB);
    EXPECT_EQ(p.bucket_of_layer, (std::vector<int>{1, 1, 0, 0}));
    EXPECT_EQ(p.gather_order, (std::vector<int>{1, 0}));  // layer 0's bucket first
}

TEST(Zero1Plan, ShardsTileEveryBucketExactly) {
    // 5 layers of 3 KiB, cap 6 KiB: buckets {4,3} {2,1} {0}; 3 ranks.
    const std::size_t kib = 1024;
    auto buckets = plan_buckets(std::vector<std::size_t>(5, 3 * kib), 6 * kib);
    ASSERT_EQ(buckets.size(), 3u);
    Zero1Plan p = plan_zero1(buckets, 5, 3);
    EXPECT_EQ(p.gather_order, (std::vector<int>{2, 1, 0}));
    EXPECT_EQ(p.bucket_of_layer, (std::vector<int>{2, 1, 1, 0, 0}));
    std::size_t covered = 0;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
        for (int r = 0; r < 3; ++r) {
            EXPECT_EQ(p.shard_offset(static_cast<int>(b), r), covered) << b << " " << r;
            covered += p.shard_bytes[b];
        }
        EXPECT_EQ(covered, buckets[b].offset + buckets[b].bytes);
    }
    EXPECT_EQ(covered, 15 * kib);
}

TEST(Zero1Plan, OneRankKeepsWholeBucketsAndUnevenBucketsAreRefused) {
    auto buckets = plan_buckets({8, 8, 8}, 0);  // one bucket per layer
    Zero1Plan one = plan_zero1(buckets, 3, 1);
    EXPECT_EQ(one.shard_bytes, (std::vector<std::size_t>{8, 8, 8}));
    EXPECT_EQ(one.gather_order, (std::vector<int>{2, 1, 0}));
    EXPECT_THROW(plan_zero1(buckets, 3, 3), std::invalid_argument);  // 8 bytes into 3 shards
    EXPECT_THROW(plan_zero1(buckets, 4, 1), std::invalid_argument);  // layer 3 in no bucket
}

}  // namespace
}  // namespace oscwl

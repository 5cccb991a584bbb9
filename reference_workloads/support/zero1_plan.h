// ZeRO stage 1 on top of the DDP buckets (bucket_plan.h): each bucket's
// gradients are reduce-scattered so that rank r keeps the r-th of `world`
// equal shards of the bucket, SGD updates only that shard of the weights, and
// the next step all-gathers every bucket's updated weights before its forward
// reads them. Gradients are laid out in reverse layer order, so the bucket
// holding layer 0 is the last one: the gathers go out in reverse bucket order
// and layer l's forward waits only for the gather of its own bucket.
#pragma once

#include <cstddef>
#include <vector>

#include "reference_workloads/support/bucket_plan.h"

namespace oscwl {

struct Zero1Plan {
    int world = 1;
    std::vector<std::size_t> bucket_offset;  // byte offset of each bucket in the flat buffers
    std::vector<std::size_t> shard_bytes;    // per bucket: bytes of one rank's shard
    std::vector<int> gather_order;           // buckets in the order the forward needs them
    std::vector<int> bucket_of_layer;        // layer -> bucket holding its parameters
    // Byte offset of `rank`'s shard of `bucket` (in-place reduce-scatter and
    // all-gather: the shard sits where it sits in the full bucket).
    std::size_t shard_offset(int bucket, int rank) const;
};

// std::invalid_argument when a bucket's bytes do not split into `world`
// equal shards or a layer is in no bucket.
Zero1Plan plan_zero1(const std::vector<Bucket>& buckets, int layers, int world);

}  // namespace oscwl

#include "reference_workloads/support/zero1_plan.h"

#include <stdexcept>
#include <string>

namespace oscwl {

std::size_t Zero1Plan::shard_offset(int bucket, int rank) const {
    const auto b = static_cast<std::size_t>(bucket);
    return bucket_offset.at(b) + static_cast<std::size_t>(rank) * shard_bytes.at(b);
}

Zero1Plan plan_zero1(const std::vector<Bucket>& buckets, int layers, int world) {
    if (world < 1) throw std::invalid_argument("plan_zero1: world must be >= 1");
    Zero1Plan p;
    p.world = world;
    p.bucket_of_layer.assign(static_cast<std::size_t>(layers), -1);
    for (std::size_t b = 0; b < buckets.size(); ++b) {
        if (buckets[b].bytes % static_cast<std::size_t>(world) != 0)
            throw std::invalid_argument("plan_zero1: bucket " + std::to_string(b) + " of " +
                                        std::to_string(buckets[b].bytes) + " bytes does not split into " +
                                        std::to_string(world) + " shards");
        p.bucket_offset.push_back(buckets[b].offset);
        p.shard_bytes.push_back(buckets[b].bytes / static_cast<std::size_t>(world));
        for (int layer : buckets[b].params) p.bucket_of_layer.at(static_cast<std::size_t>(layer)) = static_cast<int>(b);
    }
    for (int l = 0; l < layers; ++l) {
        if (p.bucket_of_layer[static_cast<std::size_t>(l)] < 0)
            throw std::invalid_argument("plan_zero1: layer " + std::to_string(l) + " is in no bucket");
        // Forward order: a bucket is gathered when its first layer comes up.
        const int b = p.bucket_of_layer[static_cast<std::size_t>(l)];
        if (p.gather_order.empty() || p.gather_order.back() != b) p.gather_order.push_back(b);
    }
    return p;
}

}  // namespace oscwl

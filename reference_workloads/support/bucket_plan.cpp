#include "reference_workloads/support/bucket_plan.h"

namespace oscwl {

std::vector<Bucket> plan_buckets(const std::vector<std::size_t>& param_bytes, std::size_t cap_bytes) {
    std::vector<Bucket> buckets;
    std::size_t offset = 0;
    for (int p = static_cast<int>(param_bytes.size()) - 1; p >= 0; --p) {
        const std::size_t b = param_bytes[static_cast<std::size_t>(p)];
        const bool open = !buckets.empty();
        // Written with a subtraction so that cap_bytes == SIZE_MAX cannot overflow;
        // a bucket already over the cap (one oversized parameter) takes nothing more.
        const bool fits = open && buckets.back().bytes <= cap_bytes && b <= cap_bytes - buckets.back().bytes;
        if (!fits) {
            Bucket fresh;
            fresh.offset = offset;
            buckets.push_back(fresh);
        }
        buckets.back().params.push_back(p);
        buckets.back().bytes += b;
        offset += b;
    }
    return buckets;
}

std::vector<std::size_t> reverse_layout_offsets(const std::vector<std::size_t>& param_bytes) {
    std::vector<std::size_t> offsets(param_bytes.size());
    std::size_t offset = 0;
    for (std::size_t i = param_bytes.size(); i-- > 0;) {
        offsets[i] = offset;
        offset += param_bytes[i];
    }
    return offsets;
}

}  // namespace oscwl

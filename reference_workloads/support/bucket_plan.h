// DDP gradient buckets. Backward produces gradients from the last layer to
// the first, so parameters are taken in reverse order and packed into
// buckets of at most `cap_bytes` (a parameter larger than the cap gets a
// bucket of its own; parameters are never split, as in PyTorch DDP). A
// bucket's all-reduce can start as soon as its last-produced gradient (its
// lowest parameter index) is ready.
#pragma once

#include <cstddef>
#include <vector>

namespace oscwl {

struct Bucket {
    std::vector<int> params;  // parameter indices in the order they are packed (descending)
    std::size_t bytes = 0;
    std::size_t offset = 0;                            // byte offset in the reverse-ordered flat gradient buffer
    int ready_after() const { return params.back(); }  // the last gradient it waits for
};

// `param_bytes` in forward (layer) order. cap_bytes == 0: every parameter in
// its own bucket; cap_bytes == SIZE_MAX: one bucket for everything.
std::vector<Bucket> plan_buckets(const std::vector<std::size_t>& param_bytes, std::size_t cap_bytes);

// Byte offset of every parameter in the flat buffer laid out in reverse
// order (last layer first), the layout that makes each bucket a contiguous
// slice, so the all-reduce runs on the gradients in place without packing.
std::vector<std::size_t> reverse_layout_offsets(const std::vector<std::size_t>& param_bytes);

}  // namespace oscwl

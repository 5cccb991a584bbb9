// The few device kernels the workloads need beyond cuBLAS: deterministic
// initialisation and the SGD update. Implemented in kernels.cu (the only
// nvcc-compiled file, kept small for build time).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "reference_workloads/support/workload_options.h"

namespace oscwl {

// p[i] = scale * u, u uniform in [-1, 1) from a hash of (seed, stream_id,
// first_index + i): the value of an element depends only on its global index,
// so a sharded tensor initialised shard by shard equals the full tensor.
void launch_fill_uniform(void* p, std::size_t count, DType dtype, std::uint64_t seed, std::uint64_t stream_id,
                         std::uint64_t first_index, float scale, cudaStream_t stream);

// out[i] = a[i] + b[i], computed in fp32; out may be a or b.
void launch_add(void* out, const void* a, const void* b, std::size_t count, DType dtype, cudaStream_t stream);

// w[i] -= lr * g[i], computed in fp32.
void launch_sgd(void* w, const void* g, std::size_t count, DType dtype, float lr, cudaStream_t stream);

}  // namespace oscwl

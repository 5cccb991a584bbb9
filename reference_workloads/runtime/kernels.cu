#include "reference_workloads/runtime/kernels.h"

#include <cuda_bf16.h>

#include "reference_workloads/runtime/cuda_check.h"

namespace oscwl {
namespace {

__device__ __forceinline__ std::uint64_t mix64(std::uint64_t x) {
    // splitmix64 finaliser: cheap and well distributed.
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__device__ __forceinline__ float load(const float* p, std::size_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, std::size_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void store(float* p, std::size_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, std::size_t i, float v) { p[i] = __float2bfloat16(v); }

template <typename T>
__global__ void fill_uniform_kernel(T* p, std::size_t count, std::uint64_t key, std::uint64_t first, float scale) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::uint64_t h = mix64(key ^ mix64(first + i));
        const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
        store(p, i, scale * (2.0f * u - 1.0f));
    }
}

template <typename T>
__global__ void sgd_kernel(T* w, const T* g, std::size_t count, float lr) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        store(w, i, load(w, i) - lr * load(g, i));
}

template <typename T>
__global__ void add_kernel(T* out, const T* a, const T* b, std::size_t count) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        store(out, i, load(a, i) + load(b, i));
}

unsigned grid_for(std::size_t count) {
    const std::size_t blocks = (count + 255) / 256;
    return static_cast<unsigned>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

}  // namespace

void launch_fill_uniform(void* p, std::size_t count, DType dtype, std::uint64_t seed, std::uint64_t stream_id,
                         std::uint64_t first_index, float scale, cudaStream_t stream) {
    const std::uint64_t key = seed * 0x100000001B3ull + stream_id * 0x9E3779B97F4A7C15ull;
    if (dtype == DType::bf16)
        fill_uniform_kernel<<<grid_for(count), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(p), count, key,
                                                                 first_index, scale);
    else
        fill_uniform_kernel<<<grid_for(count), 256, 0, stream>>>(static_cast<float*>(p), count, key, first_index,
                                                                 scale);
    OSC_CUDA(cudaGetLastError());
}

void launch_add(void* out, const void* a, const void* b, std::size_t count, DType dtype, cudaStream_t stream) {
    if (dtype == DType::bf16)
        add_kernel<<<grid_for(count), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(out),
                                                        static_cast<const __nv_bfloat16*>(a),
                                                        static_cast<const __nv_bfloat16*>(b), count);
    else
        add_kernel<<<grid_for(count), 256, 0, stream>>>(static_cast<float*>(out), static_cast<const float*>(a),
                                                        static_cast<const float*>(b), count);
    OSC_CUDA(cudaGetLastError());
}

void launch_sgd(void* w, const void* g, std::size_t count, DType dtype, float lr, cudaStream_t stream) {
    if (dtype == DType::bf16)
        sgd_kernel<<<grid_for(count), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(w),
                                                        static_cast<const __nv_bfloat16*>(g), count, lr);
    else
        sgd_kernel<<<grid_for(count), 256, 0, stream>>>(static_cast<float*>(w), static_cast<const float*>(g), count,
                                                        lr);
    OSC_CUDA(cudaGetLastError());
}

}  // namespace oscwl

// Column-major GEMM through cuBLAS (cublasGemmEx): C = A' * B' + beta C
// where ' is an optional transpose. fp32 or bf16 storage, fp32 accumulate.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "reference_workloads/support/workload_options.h"

namespace oscwl {

class Gemm {
public:
    Gemm(DType dtype, cudaStream_t stream);
    ~Gemm();
    Gemm(const Gemm&) = delete;
    Gemm& operator=(const Gemm&) = delete;

    // Workspace owned by the caller: cuBLAS then allocates nothing while a
    // stream is captured into a CUDA graph.
    void set_workspace(void* workspace, std::size_t bytes) const;

    // beta 1 accumulates into C (gradient accumulation over micro-batches).
    void run(bool trans_a, bool trans_b, int m, int n, int k, const void* a, int lda, const void* b, int ldb, void* c,
             int ldc, float beta = 0.0f) const;

private:
    cublasHandle_t handle_ = nullptr;
    DType dtype_;
};

}  // namespace oscwl

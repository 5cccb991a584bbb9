// Column-major GEMM through cuBLAS (cublasGemmEx): C = A' * B' (+ beta C)
// where ' is an optional transpose. fp32 or bf16 storage, fp32 accumulate.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "reference_workloads/support/workload_options.h"

namespace oscwl {

class Gemm {
public:
    Gemm(DType dtype, cudaStream_t stream);
    ~Gemm();
    Gemm(const Gemm&) = delete;
    Gemm& operator=(const Gemm&) = delete;

    void run(bool trans_a, bool trans_b, int m, int n, int k, const void* a, int lda, const void* b,
             int ldb, void* c, int ldc) const;

private:
    cublasHandle_t handle_ = nullptr;
    DType dtype_;
};

}  // namespace oscwl

#include "reference_workloads/runtime/gemm.h"

#include "reference_workloads/runtime/cuda_check.h"

namespace oscwl {

Gemm::Gemm(DType dtype, cudaStream_t stream) : dtype_(dtype) {
    OSC_CUBLAS(cublasCreate(&handle_));
    OSC_CUBLAS(cublasSetStream(handle_, stream));
}

Gemm::~Gemm() {
    if (handle_) cublasDestroy(handle_);
}

void Gemm::set_workspace(void* workspace, std::size_t bytes) const {
    OSC_CUBLAS(cublasSetWorkspace(handle_, workspace, bytes));
}

void Gemm::run(bool trans_a, bool trans_b, int m, int n, int k, const void* a, int lda, const void* b, int ldb, void* c,
               int ldc, float beta) const {
    const float alpha = 1.0f;
    const cudaDataType_t type = dtype_ == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F;
    OSC_CUBLAS(cublasGemmEx(handle_, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
                            &alpha, a, type, lda, b, type, ldb, &beta, c, type, ldc, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

}  // namespace oscwl

// Turns a failed CUDA, cuBLAS or NCCL call into a WorkloadError naming the
// call site, so every failure ends as one readable line and exit code 1.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "reference_workloads/support/workload_error.h"

namespace oscwl {

[[noreturn]] inline void throw_call_error(const char* lib, const char* call, const char* file, int line,
                                          const std::string& why) {
    throw WorkloadError(std::string(lib) + " call failed at " + file + ":" + std::to_string(line) + ": " + call + ": " +
                        why);
}

}  // namespace oscwl

#define OSC_CUDA(call)                                                                                 \
    do {                                                                                               \
        cudaError_t osc_rc_ = (call);                                                                  \
        if (osc_rc_ != cudaSuccess)                                                                    \
            ::oscwl::throw_call_error("CUDA", #call, __FILE__, __LINE__, cudaGetErrorString(osc_rc_)); \
    } while (0)

#define OSC_CUBLAS(call)                                                                                    \
    do {                                                                                                    \
        cublasStatus_t osc_rc_ = (call);                                                                    \
        if (osc_rc_ != CUBLAS_STATUS_SUCCESS)                                                               \
            ::oscwl::throw_call_error("cuBLAS", #call, __FILE__, __LINE__, cublasGetStatusString(osc_rc_)); \
    } while (0)

#define OSC_NCCL(call)                                                                                 \
    do {                                                                                               \
        ncclResult_t osc_rc_ = (call);                                                                 \
        if (osc_rc_ != ncclSuccess)                                                                    \
            ::oscwl::throw_call_error("NCCL", #call, __FILE__, __LINE__, ncclGetErrorString(osc_rc_)); \
    } while (0)

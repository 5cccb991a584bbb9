// What a CUDA API call is, by the name CUPTI gives it in a capture
// (cudaLaunchKernel_v7000, cudaLaunchKernel_ptsz_v7000, cuLaunchKernelEx,
// cudaMemcpyAsync_ptsz_v7000, cuMemcpyHtoDAsync_v2_ptsz...): one reading for
// the agent's stop grace (which launches still wait for their GPU record)
// and the GPU kit's counts (launches against kernels).
#pragma once

#include <string>
#include <string_view>

namespace osc {

struct Capture;

enum class ApiCallRole {
    Other,
    KernelLaunch,       // a kernel record under the call's correlation id
    AsyncCopyOrMemset,  // a copy or memset record under it; synchronous ones are done when they return
    GraphLaunch,        // cudaGraphLaunch: its nodes' records carry the call's correlation id
    BeginStreamCapture,
    EndStreamCapture,
};

ApiCallRole apiCallRole(std::string_view cuptiName);

// Whether a host call, under any vendor's or version's spelling
// (cudaLaunchKernel, cuLaunchKernelEx, hipLaunchKernel, cudaGraphLaunch...),
// starts GPU work: wider than apiCallRole's exact CUPTI names, for traces
// written by other tools (PyTorch's, AMD's) whose names it does not know.
bool launchesGpuWork(std::string_view apiName);

// Whose API a host call belongs to, for what the user reads: an AMD GPU's
// traces hold HIP calls (hipLaunchKernel, hipMemcpyAsync) where NVIDIA's
// hold CUDA ones, in the same tables and Kineto categories (cuda_runtime).
enum class ApiFamily { Cuda, Hip };
ApiFamily apiFamily(std::string_view name);
// "CUDA", "HIP", or "CUDA and HIP": the families of the calls in `capture`.
std::string apiFamiliesOf(const Capture& capture);

}  // namespace osc

// The kernel names every synthetic workload writes, spelled as real runs
// spell them (cuBLAS GEMMs, NCCL >= 2.19 device kernels), so synthetic
// captures are classified exactly as real ones are.
#pragma once

#include <string_view>

namespace osc::synth {

inline constexpr std::string_view kForwardName = "ampere_sgemm_128x64_nn";
inline constexpr std::string_view kBackwardName = "ampere_sgemm_128x64_nt";
inline constexpr std::string_view kNcclName =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
inline constexpr std::string_view kNcclShortName = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
inline constexpr std::string_view kP2pName = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
inline constexpr std::string_view kP2pShortName = "ncclDevKernel_SendRecv";

}  // namespace osc::synth

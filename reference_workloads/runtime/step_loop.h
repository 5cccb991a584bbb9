// Runs warm-up and measured steps inside NVTX ranges ("warmup N", then
// "step N", which the analyzer's default step pattern matches) and times
// each measured step with CUDA events on the compute stream.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "reference_workloads/support/workload_options.h"

namespace oscwl {

// `step` must leave all its work joined into `stream` (the programs make the
// compute stream wait for the communication stream before returning), so
// the end event covers the whole step. Returns measured step times in ms.
std::vector<double> run_steps(const CommonOptions& options, cudaStream_t stream, const std::function<void(int)>& step,
                              bool print_each);

}  // namespace oscwl

// The clocks the agent stamps with: CLOCK_REALTIME (what CUPTI and NCCL's
// plugin rows are aligned on across ranks), CLOCK_MONOTONIC and the
// calling thread's CPU time.
#pragma once

#include <cstdint>

namespace osc::agent {

int64_t realtimeNs();
int64_t monotonicNs();
// CPU time of the calling thread.
int64_t threadCpuNs();

}  // namespace osc::agent

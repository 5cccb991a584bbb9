// The NCCL profiler plugin's callbacks (ABI versions 4 and 5) on top of a
// CollectiveTracker per communicator. Everything of the plugin but finding
// the agent: nccl_plugin.cpp exports the tables profilerV5/V4 make with an
// `init` that hands the rows to the agent; tests make the same tables with an
// `init` that hands them to their own sink, and play NCCL on them
// (tests/agent/fake_nccl.h).
#pragma once

#include "agent/nccl_plugin/collective_tracker.h"
#include "agent/nccl_plugin/nccl_profiler_abi.h"

namespace osc::agent::nccl {

// The events the plugin asks NCCL for: kernel launches (Group), collectives,
// sends and receives, and their kernel channels (GPU times).
inline constexpr int kEventMask = ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh;

// `init` once the rows' destination is known: a tracker for the communicator
// as the context, and the event mask.
ncclResult_t initContext(void** context, int* eActivationMask, uint64_t commHash, int nranks, int rank,
                         CollectiveTracker::Emit emit);

ncclResult_t startEventV4(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* eDescr);
ncclResult_t startEventV5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
ncclResult_t stopEvent(void* eHandle);
// Versions 4 and 5 share the state values and arguments we read.
ncclResult_t recordEventState(void* eHandle, int eState, ncclProfilerEventStateArgs_v5_t* eStateArgs);
ncclResult_t finalize(void* context);

// The tables NCCL looks up (ncclProfiler_v5, ncclProfiler_v4), around the
// caller's `init`. Constant: an exported table is filled before NCCL can
// dlsym it.
constexpr ncclProfiler_v5_t profilerV5(decltype(ncclProfiler_v5_t::init) init) {
    return {"overlapscope", init, startEventV5, stopEvent, recordEventState, finalize};
}
constexpr ncclProfiler_v4_t profilerV4(decltype(ncclProfiler_v4_t::init) init) {
    return {"overlapscope", init, startEventV4, stopEvent, recordEventState, finalize};
}

}  // namespace osc::agent::nccl

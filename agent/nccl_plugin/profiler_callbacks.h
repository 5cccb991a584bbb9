// The NCCL profiler plugin's callbacks (ABI versions 4 and 5) on top of the
// process's communicators (plugin_comms.h), each with its CollectiveTracker.
// Everything of the plugin but finding the agent: nccl_plugin.cpp exports
// the tables profilerV5/V4 make with an `init` that hands the rows to the
// agent; tests make the same tables with an `init` that hands them to their
// own sink, and play NCCL on them (tests/agent/fake_nccl.h).
//
// Nothing NCCL passes is trusted: contexts and event handles are checked
// against what the plugin gave out before use (never followed as pointers),
// and no exception ever leaves a callback.
#pragma once

#include "agent/core/ignored_calls.h"
#include "agent/nccl_plugin/collective_tracker.h"
#include "agent/nccl_plugin/nccl_profiler_abi.h"
#include "agent/nccl_plugin/plugin_chain.h"

#include <memory>
#include <vector>

namespace osc::agent::nccl {

// The events the plugin asks NCCL for: kernel launches (Group), collectives,
// sends and receives, and their kernel channels (GPU times).
inline constexpr int kEventMask = ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh;

// Adds `bits` to NCCL's event mask. The mask is one int for the whole
// process, read by every communicator's threads with atomic loads: it is
// only ever raised here, never lowered or cleared (another communicator's
// events depend on it), and raised atomically.
void raiseEventMask(int* eActivationMask, int bits);

// `init` (of ABI `abi`) once the rows' destination is known: a new
// communicator as the context, and the event mask raised by kEventMask and
// by what a chained plugin asked for. Leaves the mask as it was when no
// communicator can be made.
ncclResult_t initContext(void** context, int* eActivationMask, Abi abi, const InitArgs& args,
                         CollectiveTracker::Emit emit);

// Every communicator made from now on forwards to `plugin` too (nullptr: none).
void chainPlugin(std::shared_ptr<const ChainedPlugin> plugin);

ncclResult_t startEventV4(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* eDescr);
ncclResult_t startEventV5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
ncclResult_t stopEvent(void* eHandle);
// Versions 4 and 5 share the state values and arguments we read.
ncclResult_t recordEventState(void* eHandle, int eState, ncclProfilerEventStateArgs_v5_t* eStateArgs);
ncclResult_t finalize(void* context);

// What a closing capture writes of the operations still open, and the
// calls refused so far, over every communicator of the process.
std::vector<PendingCollective> openRowsOfAll();
IgnoredCalls ignoredCallsOfAll();

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

// The exported NCCL profiler plugin structs (ncclProfiler_v5 for NCCL 2.28,
// ncclProfiler_v4 for 2.27). NCCL looks them up by name in the library that
// NCCL_PROFILER_PLUGIN names, which `overlapscope run` points at the agent.
#include "agent/core/agent.h"
#include "agent/core/agent_runtime.h"
#include "agent/nccl_plugin/collective_tracker.h"
#include "agent/nccl_plugin/nccl_profiler_abi.h"

#include <new>

namespace osc::agent {
namespace {

constexpr int kEventMask = ncclProfileColl | ncclProfileKernelCh;

ncclResult_t initCommon(void** context, int* mask, uint64_t commHash, int nranks, int rank) {
    *context = nullptr;
    *mask = 0;
    Agent* agent = ensureAgent();
    if (!agent) return 0;  // success with no events: NCCL runs as without a plugin
    *context = new (std::nothrow) CollectiveTracker(
        commHash, nranks, rank, [agent](PendingCollective&& c) { agent->submitCollective(std::move(c)); });
    if (*context) *mask = kEventMask;
    return 0;
}

template <typename Descr>
ncclResult_t startCommon(void* context, void** handle, Descr* d) {
    *handle = nullptr;
    auto* tracker = static_cast<CollectiveTracker*>(context);
    if (!tracker || !d) return 0;
    if (d->type == ncclProfileColl) {
        CollectiveTracker::CollInfo info;
        info.seqNumber = d->coll.seqNumber;
        info.func = d->coll.func;
        info.datatype = d->coll.datatype;
        info.algo = d->coll.algo;
        info.proto = d->coll.proto;
        info.count = d->coll.count;
        info.root = d->coll.root;
        info.nChannels = d->coll.nChannels;
        *handle = tracker->startColl(info, realtimeNs());
    } else if (d->type == ncclProfileKernelCh) {
        *handle = tracker->startKernelChannel(d->parentObj, d->kernelCh.pTimer);
    }
    return 0;
}

template <typename Descr>
ncclResult_t startEvent(void* context, void** handle, Descr* d) {
    return startCommon(context, handle, d);
}

ncclResult_t stopEvent(void* handle) {
    if (auto* tracker = CollectiveTracker::ownerOf(handle)) tracker->stop(handle);
    return 0;
}

ncclResult_t recordState(void* handle, int state, ncclProfilerEventStateArgs_v5_t* args) {
    auto* tracker = CollectiveTracker::ownerOf(handle);
    if (tracker && state == ncclProfilerKernelChStop && args)
        tracker->kernelChannelStopped(handle, args->kernelCh.pTimer);
    return 0;
}

ncclResult_t finalize(void* context) {
    delete static_cast<CollectiveTracker*>(context);  // emits what is still open
    return 0;
}

ncclResult_t initV5(void** context, uint64_t commId, int* mask, const char*, int, int nranks, int rank,
                    ncclDebugLogger_t) {
    return initCommon(context, mask, commId, nranks, rank);
}

ncclResult_t initV4(void** context, int* mask, const char*, uint64_t commHash, int, int nranks, int rank,
                    ncclDebugLogger_t) {
    return initCommon(context, mask, commHash, nranks, rank);
}

}  // namespace
}  // namespace osc::agent

extern "C" {

__attribute__((visibility("default"))) ncclProfiler_v5_t ncclProfiler_v5 = {
    "overlapscope",
    osc::agent::initV5,
    osc::agent::startEvent<ncclProfilerEventDescr_v5_t>,
    osc::agent::stopEvent,
    osc::agent::recordState,
    osc::agent::finalize,
};

__attribute__((visibility("default"))) ncclProfiler_v4_t ncclProfiler_v4 = {
    "overlapscope",
    osc::agent::initV4,
    osc::agent::startEvent<ncclProfilerEventDescr_v4_t>,
    osc::agent::stopEvent,
    osc::agent::recordState,
    osc::agent::finalize,
};

}  // extern "C"

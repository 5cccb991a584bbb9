#include "agent/nccl_plugin/profiler_callbacks.h"

#include <new>

namespace osc::agent::nccl {
namespace {

// Where each version keeps an operation's kernel launch (its Group event):
// version 4 in parentObj; version 5 in the descriptor, parentObj being the
// API call then.
void* collGroup(const ncclProfilerEventDescr_v4_t& d) { return d.parentObj; }
void* p2pGroup(const ncclProfilerEventDescr_v4_t& d) { return d.parentObj; }
void* collGroup(const ncclProfilerEventDescr_v5_t& d) { return d.coll.parentGroup; }
void* p2pGroup(const ncclProfilerEventDescr_v5_t& d) { return d.p2p.parentGroup; }

template <typename Descr>
ncclResult_t startCommon(void* context, void** handle, Descr* d) {
    *handle = nullptr;
    auto* tracker = static_cast<CollectiveTracker*>(context);
    if (!tracker || !d) return 0;
    if (d->type == ncclProfileGroup) {
        // NCCL with ABI version 4 starts no Coll or P2p event in a launch
        // whose Group event got no handle.
        *handle = tracker->startGroup();
    } else if (d->type == ncclProfileColl) {
        CollectiveTracker::CollInfo info;
        info.seqNumber = d->coll.seqNumber;
        info.func = d->coll.func;
        info.datatype = d->coll.datatype;
        info.algo = d->coll.algo;
        info.proto = d->coll.proto;
        info.count = d->coll.count;
        info.root = d->coll.root;
        info.nChannels = d->coll.nChannels;
        *handle = tracker->startColl(info, realtimeNs(), collGroup(*d));
    } else if (d->type == ncclProfileP2p) {
        CollectiveTracker::P2pInfo info;
        info.func = d->p2p.func;
        info.datatype = d->p2p.datatype;
        info.count = d->p2p.count;
        info.peer = d->p2p.peer;
        info.nChannels = d->p2p.nChannels;
        *handle = tracker->startP2p(info, realtimeNs(), p2pGroup(*d));
    } else if (d->type == ncclProfileKernelCh) {
        *handle = tracker->startKernelChannel(d->parentObj, d->kernelCh.pTimer);
    }
    return 0;
}

}  // namespace

ncclResult_t initContext(void** context, int* eActivationMask, uint64_t commHash, int nranks, int rank,
                         CollectiveTracker::Emit emit) {
    *context = new (std::nothrow) CollectiveTracker(commHash, nranks, rank, std::move(emit));
    *eActivationMask = *context ? kEventMask : 0;
    return 0;
}

ncclResult_t startEventV4(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* eDescr) {
    return startCommon(context, eHandle, eDescr);
}

ncclResult_t startEventV5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr) {
    return startCommon(context, eHandle, eDescr);
}

ncclResult_t stopEvent(void* eHandle) {
    if (auto* tracker = CollectiveTracker::ownerOf(eHandle)) tracker->stop(eHandle);
    return 0;
}

ncclResult_t recordEventState(void* eHandle, int eState, ncclProfilerEventStateArgs_v5_t* eStateArgs) {
    auto* tracker = CollectiveTracker::ownerOf(eHandle);
    if (tracker && eState == ncclProfilerKernelChStop && eStateArgs)
        tracker->kernelChannelStopped(eHandle, eStateArgs->kernelCh.pTimer);
    return 0;
}

ncclResult_t finalize(void* context) {
    delete static_cast<CollectiveTracker*>(context);  // emits what is still open
    return 0;
}

}  // namespace osc::agent::nccl

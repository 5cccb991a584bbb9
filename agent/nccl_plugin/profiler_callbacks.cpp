#include "agent/nccl_plugin/profiler_callbacks.h"

#include "agent/core/clocks.h"
#include "agent/nccl_plugin/plugin_comms.h"

#include <unistd.h>
#include <atomic>
#include <type_traits>

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
void* startOn(CollectiveTracker& tracker, const Descr& d) {
    const auto type = static_cast<uint64_t>(d.type);
    if (type == ncclProfileGroup) {
        // NCCL with ABI version 4 starts no Coll or P2p event in a launch
        // whose Group event got no handle.
        return tracker.startGroup();
    }
    if (type == ncclProfileColl) {
        CollectiveTracker::CollInfo info;
        info.seqNumber = d.coll.seqNumber;
        info.func = d.coll.func;
        info.datatype = d.coll.datatype;
        info.algo = d.coll.algo;
        info.proto = d.coll.proto;
        info.count = d.coll.count;
        info.root = d.coll.root;
        info.nChannels = d.coll.nChannels;
        return tracker.startColl(info, realtimeNs(), collGroup(d));
    }
    if (type == ncclProfileP2p) {
        CollectiveTracker::P2pInfo info;
        info.func = d.p2p.func;
        info.datatype = d.p2p.datatype;
        info.count = d.p2p.count;
        info.peer = d.p2p.peer;
        info.nChannels = d.p2p.nChannels;
        return tracker.startP2p(info, realtimeNs(), p2pGroup(d));
    }
    if (type == ncclProfileKernelCh) return tracker.startKernelChannel(d.parentObj, d.kernelCh.pTimer);
    return nullptr;  // events we did not ask for (another plugin's mask)
}

// With another plugin chained: each plugin starts the event with its own
// parents, and NCCL gets one link naming both (plugin_chain.h).
template <typename Descr>
void* startChained(PluginComm& comm, const Descr& d) {
    ChainedComm& chain = *comm.chain;
    const auto type = static_cast<uint64_t>(d.type);
    Descr ours = d, theirs = d;
    bool known = true;
    const auto translate = [&](void* value, void*& toOurs, void*& toTheirs) {
        const ChainedComm::Parent p = chain.parent(value);
        toOurs = p.ours;
        toTheirs = p.theirs;
        known = known && p.known;
    };
    // A proxy operation of another process names that process's parent: not ours to translate.
    if (!(type == ncclProfileProxyOp && d.proxyOp.pid != ::getpid()))
        translate(d.parentObj, ours.parentObj, theirs.parentObj);
    if constexpr (std::is_same_v<Descr, ncclProfilerEventDescr_v5_t>) {
        if (type == ncclProfileColl) translate(d.coll.parentGroup, ours.coll.parentGroup, theirs.coll.parentGroup);
        if (type == ncclProfileP2p) translate(d.p2p.parentGroup, ours.p2p.parentGroup, theirs.p2p.parentGroup);
    }
    // A kernel channel of an operation that is gone: neither plugin may follow it.
    if (type == ncclProfileKernelCh && !known) return nullptr;
    void* mine = (type & kEventMask) ? startOn(comm.tracker, ours) : nullptr;
    void* other = chain.startTheirs(type, &theirs);
    return chain.link(mine, other, type);
}

template <typename Descr>
ncclResult_t startCommon(void* context, void** handle, Descr* d) {
    if (!handle) return 0;
    *handle = nullptr;
    if (!d) return 0;
    try {
        if (auto comm = PluginComms::process().byContext(context))
            *handle = comm->chain ? startChained(*comm, *d) : startOn(comm->tracker, *d);
    } catch (...) {
        // Out of memory: no handle, so NCCL asks nothing more of this event.
        *handle = nullptr;
    }
    return 0;
}

}  // namespace

void raiseEventMask(int* eActivationMask, int bits) {
    if (eActivationMask) std::atomic_ref<int>(*eActivationMask).fetch_or(bits, std::memory_order_relaxed);
}

ncclResult_t initContext(void** context, int* eActivationMask, Abi abi, const InitArgs& args,
                         CollectiveTracker::Emit emit) {
    if (!context) return 0;
    *context = nullptr;
    try {
        *context = PluginComms::process().open(abi, args, std::move(emit));
    } catch (...) {
        *context = nullptr;
    }
    if (*context) raiseEventMask(eActivationMask, kEventMask | PluginComms::process().chainedMask(*context));
    return 0;
}

void chainPlugin(std::shared_ptr<const ChainedPlugin> plugin) { PluginComms::process().chain(std::move(plugin)); }

ncclResult_t startEventV4(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* eDescr) {
    return startCommon(context, eHandle, eDescr);
}

ncclResult_t startEventV5(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr) {
    return startCommon(context, eHandle, eDescr);
}

ncclResult_t stopEvent(void* eHandle) {
    try {
        if (auto comm = PluginComms::process().byHandle(eHandle)) {
            if (!comm->chain)
                comm->tracker.stop(eHandle);
            else if (void* mine = comm->chain->stop(eHandle))
                comm->tracker.stop(mine);
        }
    } catch (...) {}
    return 0;
}

ncclResult_t recordEventState(void* eHandle, int eState, ncclProfilerEventStateArgs_v5_t* eStateArgs) {
    // Only a channel's stop carries something for us; other states are only
    // a chained plugin's, and without one they are not even looked at.
    if (eState != ncclProfilerKernelChStop && !PluginComms::process().chained()) return 0;
    try {
        auto comm = PluginComms::process().byHandle(eHandle);
        if (!comm) return 0;
        const uint64_t pTimer = eStateArgs ? eStateArgs->kernelCh.pTimer : 0;
        void* mine = comm->chain ? comm->chain->record(eHandle, eState, eStateArgs) : eHandle;
        if (mine && eState == ncclProfilerKernelChStop) comm->tracker.kernelChannelStopped(mine, pTimer);
    } catch (...) {}
    return 0;
}

ncclResult_t finalize(void* context) {
    try {
        // Emits what is still open; a call racing this one still finds a
        // live object, which counts it.
        if (auto comm = PluginComms::process().close(context)) {
            if (comm->chain) comm->chain->finalize();
            comm->tracker.finalize();
        }
    } catch (...) {}
    return 0;
}

std::vector<PendingCollective> openRowsOfAll() { return PluginComms::process().openRows(); }

IgnoredCalls ignoredCallsOfAll() { return PluginComms::process().ignored(); }

}  // namespace osc::agent::nccl

// Plays NCCL against a profiler plugin's table (ncclProfiler_v5 or
// ncclProfiler_v4): one rank's communicator, with event descriptors made by
// hand in the shape and order NCCL 2.28 (ABI version 5) or 2.27 (version 4)
// gives them. Per kernel launch NCCL starts a Group event, then the
// operations of the launch (Coll, P2p), stops them once enqueued, stops the
// group; its proxy thread then reports each channel of each operation as the
// kernel runs (KernelCh start, a KernelChStop state with the GPU timer,
// stop), possibly before the operations were stopped.
//
// Header-only on the ABI declarations: fake_job drives the agent library's
// exported tables with it (dlsym, as NCCL finds them), the unit tests the
// same tables with their own `init` (fake_nccl_sink.h).
#pragma once

#include "agent/nccl_plugin/nccl_profiler_abi.h"

#include <cstdint>

namespace osc::agent::test {

using NcclAbi = nccl::Abi;

// One ABI version's table, as NCCL found it.
struct NcclPlugin {
    NcclPlugin(const ncclProfiler_v5_t& p) : abi(NcclAbi::V5), v5(p) {}  // NOLINT: either table will do
    NcclPlugin(const ncclProfiler_v4_t& p) : abi(NcclAbi::V4), v4(p) {}  // NOLINT
    NcclAbi abi;
    ncclProfiler_v5_t v5{};
    ncclProfiler_v4_t v4{};
};

class FakeNcclComm {
public:
    // NCCL's `init` for a new communicator, as 2.28 and 2.27 call it.
    FakeNcclComm(const NcclPlugin& plugin, uint64_t commHash, int nranks, int rank)
        : abi_(plugin.abi), v5_(plugin.v5), v4_(plugin.v4), rank_(rank) {
        initResult_ = abi_ == NcclAbi::V5 ? v5_.init(&context_, commHash, &mask_, "fake", 1, nranks, rank, nullptr)
                                          : v4_.init(&context_, &mask_, "fake", commHash, 1, nranks, rank, nullptr);
    }
    ~FakeNcclComm() { finalize(); }
    FakeNcclComm(const FakeNcclComm&) = delete;
    FakeNcclComm& operator=(const FakeNcclComm&) = delete;

    ncclResult_t initResult() const { return initResult_; }
    int mask() const { return mask_; }
    // NCCL destroys the communicator: the plugin's `finalize`.
    void finalize() {
        finalizeKeepingContext();
        context_ = nullptr;
    }
    // The same, but later starts still pass the finalized context, as a
    // thread of NCCL's that did not notice the destruction would.
    void finalizeKeepingContext() {
        if (context_ && !finalized_) abi_ == NcclAbi::V5 ? v5_.finalize(context_) : v4_.finalize(context_);
        finalized_ = true;
    }
    void* context() const { return context_; }

    // A kernel launch: its Group event's handle, stopped with stop().
    void* launch() {
        Descr d;
        d.v4.type = ncclProfileGroup;
        d.v5.type = ncclProfileGroup;
        return start(d);
    }

    void* send(void* group, int peer, size_t count, const char* datatype, int nChannels) {
        return p2p(group, "Send", peer, count, datatype, nChannels);
    }
    void* recv(void* group, int peer, size_t count, const char* datatype, int nChannels) {
        return p2p(group, "Recv", peer, count, datatype, nChannels);
    }

    // `group` nullptr: a collective whose launch the plugin is not told.
    // With ABI 5 and CollApi events asked for, the collective's API call
    // comes first and is stopped as the call returns; the collective then
    // names it as its parentObj, after its stop, as NCCL 2.28 does.
    void* coll(void* group, const char* func, uint64_t seqNumber, size_t count, const char* datatype, int nChannels) {
        void* api = nullptr;
        if (abi_ == NcclAbi::V5 && (mask_ & ncclProfileCollApi)) {
            Descr a;
            a.v5.type = ncclProfileCollApi;
            a.v5.rank = rank_;
            a.v5.collApi.func = func;
            a.v5.collApi.count = count;
            a.v5.collApi.datatype = datatype;
            a.v5.collApi.root = -1;
            api = start(a);
            if (api) stop(api);
        }
        Descr d;
        d.v4.type = ncclProfileColl;
        d.v4.parentObj = group;
        d.v4.rank = rank_;
        d.v4.coll = {seqNumber, func,   nullptr, nullptr, count, -1, datatype, static_cast<uint8_t>(nChannels),
                     16,        "RING", "SIMPLE"};
        d.v5.type = ncclProfileColl;
        d.v5.parentObj = api;
        d.v5.rank = rank_;
        d.v5.coll = {seqNumber, func,   nullptr,  nullptr, count, -1, datatype, static_cast<uint8_t>(nChannels),
                     16,        "RING", "SIMPLE", group};
        return start(d);
    }

    void stop(void* handle) { abi_ == NcclAbi::V5 ? v5_.stopEvent(handle) : v4_.stopEvent(handle); }
    // A raw start on `context` (any value), as NCCL would call it.
    void* startOn(void* context, int type, void* parentObj) {
        Descr d;
        d.v4.type = static_cast<uint8_t>(type);
        d.v4.parentObj = parentObj;
        d.v5.type = static_cast<uint64_t>(type);
        d.v5.parentObj = parentObj;
        void* handle = nullptr;
        if (abi_ == NcclAbi::V5)
            v5_.startEvent(context, &handle, &d.v5);
        else
            v4_.startEvent(context, &handle, &d.v4);
        return handle;
    }

    // A kernel channel of operation `op` starting at GPU timer `pTimer`.
    void* channelStart(void* op, int channelId, uint64_t pTimer) {
        Descr d;
        d.v4.type = ncclProfileKernelCh;
        d.v4.parentObj = op;
        d.v4.rank = rank_;
        d.v4.kernelCh = {static_cast<uint8_t>(channelId), pTimer};
        d.v5.type = ncclProfileKernelCh;
        d.v5.parentObj = op;
        d.v5.rank = rank_;
        d.v5.kernelCh = {static_cast<uint8_t>(channelId), pTimer};
        return start(d);
    }
    void channelStop(void* channel, uint64_t pTimer) {
        ncclProfilerEventStateArgs_v5_t args{};
        args.kernelCh.pTimer = pTimer;
        if (abi_ == NcclAbi::V5)
            v5_.recordEventState(channel, ncclProfilerKernelChStop, &args);
        else
            v4_.recordEventState(channel, ncclProfilerKernelChStop, &args);
        stop(channel);
    }
    void channel(void* op, int channelId, uint64_t startPTimer, uint64_t stopPTimer) {
        channelStop(channelStart(op, channelId, startPTimer), stopPTimer);
    }

private:
    struct Descr {
        ncclProfilerEventDescr_v4_t v4{};
        ncclProfilerEventDescr_v5_t v5{};
    };

    void* p2p(void* group, const char* func, int peer, size_t count, const char* datatype, int nChannels) {
        Descr d;
        // Version 4 keeps the launch in parentObj; version 5 in the
        // descriptor, its parentObj being the API call (P2pApi, which the
        // plugin does not ask for: no handle).
        d.v4.type = ncclProfileP2p;
        d.v4.parentObj = group;
        d.v4.rank = rank_;
        d.v4.p2p = {func, nullptr, datatype, count, peer, static_cast<uint8_t>(nChannels)};
        d.v5.type = ncclProfileP2p;
        d.v5.rank = rank_;
        d.v5.p2p = {func, nullptr, datatype, count, peer, static_cast<uint8_t>(nChannels), group};
        return start(d);
    }

    void* start(Descr& d) {
        void* handle = nullptr;
        if (!context_) return handle;
        if (abi_ == NcclAbi::V5)
            v5_.startEvent(context_, &handle, &d.v5);
        else
            v4_.startEvent(context_, &handle, &d.v4);
        return handle;
    }

    NcclAbi abi_;
    ncclProfiler_v5_t v5_;
    ncclProfiler_v4_t v4_;
    int rank_;
    void* context_ = nullptr;
    bool finalized_ = false;
    int mask_ = 0;
    ncclResult_t initResult_ = 0;
};

}  // namespace osc::agent::test

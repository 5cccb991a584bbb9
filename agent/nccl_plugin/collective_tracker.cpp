#include "agent/nccl_plugin/collective_tracker.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace osc::agent {

struct CollectiveTracker::Event {
    enum Kind { CollEvent, ChannelEvent } kind;
    CollectiveTracker* owner;
};

CollectiveTracker* CollectiveTracker::ownerOf(void* handle) {
    return handle ? static_cast<Event*>(handle)->owner : nullptr;
}

struct CollectiveTracker::Coll : Event {
    PendingCollective pending;
    int channelsStarted = 0, channelsStopped = 0;
    bool stopped = false;
    int64_t gpuStart = -1, gpuEnd = -1;
    Coll *prev = nullptr, *next = nullptr;
};

struct CollectiveTracker::Channel : Event {
    Coll* parent = nullptr;
};

size_t ncclDatatypeBytes(const char* datatype) {
    if (!datatype) return 0;
    const std::string_view t(datatype);
    if (t == "ncclInt8" || t == "ncclUint8" || t == "ncclFloat8e4m3" || t == "ncclFloat8e5m2") return 1;
    if (t == "ncclFloat16" || t == "ncclBfloat16") return 2;
    if (t == "ncclInt32" || t == "ncclUint32" || t == "ncclFloat32") return 4;
    if (t == "ncclInt64" || t == "ncclUint64" || t == "ncclFloat64") return 8;
    return 0;
}

CollectiveTracker::CollectiveTracker(uint64_t commHash, int nranks, int rank, Emit emit)
    : commHash_(commHash), nranks_(nranks), rank_(rank), emit_(std::move(emit)) {}

CollectiveTracker::~CollectiveTracker() { finalize(); }

void* CollectiveTracker::startColl(const CollInfo& info, int64_t nowNs) {
    auto* c = new Coll{};
    c->kind = Event::CollEvent;
    c->owner = this;
    CollectiveRow& r = c->pending.row;
    r.commHash = commHash_;
    r.rank = rank_;
    r.nranks = nranks_;
    r.seqNumber = info.seqNumber;
    r.count = info.count;
    r.bytes = info.count * ncclDatatypeBytes(info.datatype);
    r.root = info.root;
    r.nChannels = info.nChannels;
    r.enqueue = nowNs;
    c->pending.func = info.func ? info.func : "";
    c->pending.datatype = info.datatype ? info.datatype : "";
    c->pending.algo = info.algo ? info.algo : "";
    c->pending.proto = info.proto ? info.proto : "";
    std::lock_guard lock(mutex_);
    c->next = open_;
    if (open_) open_->prev = c;
    open_ = c;
    return c;
}

void* CollectiveTracker::startKernelChannel(void* collHandle, uint64_t startPTimer) {
    auto* coll = static_cast<Event*>(collHandle);
    if (!coll || coll->kind != Event::CollEvent) return nullptr;
    auto* ch = new Channel{};
    ch->kind = Event::ChannelEvent;
    ch->owner = this;
    ch->parent = static_cast<Coll*>(coll);
    std::lock_guard lock(mutex_);
    Coll* c = ch->parent;
    ++c->channelsStarted;
    const auto t = static_cast<int64_t>(startPTimer);
    if (startPTimer && (c->gpuStart < 0 || t < c->gpuStart)) c->gpuStart = t;
    return ch;
}

void CollectiveTracker::kernelChannelStopped(void* handle, uint64_t stopPTimer) {
    auto* e = static_cast<Event*>(handle);
    if (!e || e->kind != Event::ChannelEvent) return;
    std::lock_guard lock(mutex_);
    Coll* c = static_cast<Channel*>(e)->parent;
    const auto t = static_cast<int64_t>(stopPTimer);
    if (stopPTimer && t > c->gpuEnd) c->gpuEnd = t;
}

void CollectiveTracker::stop(void* handle) {
    auto* e = static_cast<Event*>(handle);
    if (!e) return;
    std::lock_guard lock(mutex_);
    if (e->kind == Event::ChannelEvent) {
        auto* ch = static_cast<Channel*>(e);
        Coll* c = ch->parent;
        delete ch;
        ++c->channelsStopped;
        maybeEmit(c);
        return;
    }
    auto* c = static_cast<Coll*>(e);
    c->stopped = true;  // enqueued; the GPU side may still be running
    maybeEmit(c);
}

void CollectiveTracker::maybeEmit(Coll* c) {
    if (!c->stopped) return;
    if (c->channelsStopped < std::max(c->pending.row.nChannels, c->channelsStarted)) return;
    if (c->channelsStarted == 0 && c->pending.row.nChannels > 0) return;  // channels not seen yet
    c->pending.row.gpuStart = c->gpuStart;
    c->pending.row.gpuEnd = c->gpuEnd;
    if (c->prev) c->prev->next = c->next;
    else open_ = c->next;
    if (c->next) c->next->prev = c->prev;
    emit_(std::move(c->pending));
    delete c;
}

void CollectiveTracker::finalize() {
    std::lock_guard lock(mutex_);
    while (open_) {
        Coll* c = open_;
        open_ = c->next;
        c->pending.row.gpuStart = c->gpuStart;
        c->pending.row.gpuEnd = c->gpuEnd;
        emit_(std::move(c->pending));
        delete c;
    }
}

}  // namespace osc::agent

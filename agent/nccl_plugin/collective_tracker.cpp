#include "agent/nccl_plugin/collective_tracker.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace osc::agent {
namespace {

// A group handle is no object but an odd number holding its launch's place in
// order: nothing ever follows it, so it may be handed back at any time, and
// no object pointer (aligned, so even) is ever taken for one.
void* groupHandle(uint64_t plan) { return reinterpret_cast<void*>(static_cast<uintptr_t>(plan << 1 | 1)); }
bool isGroupHandle(const void* handle) { return (reinterpret_cast<uintptr_t>(handle) & 1u) != 0; }
uint64_t planOf(const void* group) { return isGroupHandle(group) ? reinterpret_cast<uintptr_t>(group) >> 1 : 0; }

int p2pDirection(const char* func) {
    const std::string_view f = func ? func : "";
    return f == "Send" ? 0 : f == "Recv" ? 1 : 2;
}

// Every live tracker, for the rows a closing capture writes. Taken before a
// tracker's own mutex, never while holding it.
std::mutex& registryMutex() {
    static std::mutex m;
    return m;
}
// Never destroyed: NCCL loads the plugin after the agent registered its exit
// handler, so a destructible set would be gone before that handler's
// closing capture asks it for the rows still open.
std::unordered_set<CollectiveTracker*>& registry() {
    static auto* live = new std::unordered_set<CollectiveTracker*>;
    return *live;
}

}  // namespace

struct CollectiveTracker::Event {
    enum Kind { OpEvent, ChannelEvent } kind;
    CollectiveTracker* owner;
};

CollectiveTracker* CollectiveTracker::ownerOf(void* handle) {
    if (!handle || isGroupHandle(handle)) return nullptr;
    return static_cast<Event*>(handle)->owner;
}

struct CollectiveTracker::Op : Event {
    PendingCollective pending;
    uint64_t order = 0;  // start order in the tracker
    uint64_t plan = 0;   // its kernel launch (startGroup's count); 0 unknown
    int channelsStarted = 0, channelsStopped = 0;
    bool stopped = false;
    int64_t gpuStart = -1, gpuEnd = -1;
};

struct CollectiveTracker::Channel : Event {
    Op* parent = nullptr;
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
    : commHash_(commHash), nranks_(nranks), rank_(rank), emit_(std::move(emit)) {
    std::lock_guard lock(registryMutex());
    registry().insert(this);
}

CollectiveTracker::~CollectiveTracker() {
    {
        // First, so that openRowsOfAll() never sees a tracker being destroyed.
        std::lock_guard lock(registryMutex());
        registry().erase(this);
    }
    finalize();
}

void* CollectiveTracker::startGroup() {
    std::lock_guard lock(mutex_);
    return groupHandle(++plans_);
}

void* CollectiveTracker::startColl(const CollInfo& info, int64_t nowNs, void* group) {
    auto* op = new Op{};
    CollectiveRow& r = op->pending.row;
    r.seqNumber = info.seqNumber;
    r.count = info.count;
    r.bytes = info.count * ncclDatatypeBytes(info.datatype);
    r.root = info.root;
    r.nChannels = info.nChannels;
    r.enqueue = nowNs;
    op->pending.func = info.func ? info.func : "";
    op->pending.datatype = info.datatype ? info.datatype : "";
    op->pending.algo = info.algo ? info.algo : "";
    op->pending.proto = info.proto ? info.proto : "";
    std::lock_guard lock(mutex_);
    return open(op, group);
}

void* CollectiveTracker::startP2p(const P2pInfo& info, int64_t nowNs, void* group) {
    auto* op = new Op{};
    CollectiveRow& r = op->pending.row;
    r.count = info.count;
    r.bytes = info.count * ncclDatatypeBytes(info.datatype);
    r.root = info.peer;  // where the capture format keeps a point-to-point call's peer
    r.nChannels = info.nChannels;
    r.enqueue = nowNs;
    op->pending.func = info.func ? info.func : "";
    op->pending.datatype = info.datatype ? info.datatype : "";
    std::lock_guard lock(mutex_);
    r.seqNumber = p2pCalls_[{info.peer, p2pDirection(info.func)}]++;
    return open(op, group);
}

void* CollectiveTracker::open(Op* op, void* group) {
    op->kind = Event::OpEvent;
    op->owner = this;
    CollectiveRow& r = op->pending.row;
    r.commHash = commHash_;
    r.rank = rank_;
    r.nranks = nranks_;
    op->order = started_++;
    op->plan = planOf(group);
    open_.insert(op);
    return op;
}

void* CollectiveTracker::startKernelChannel(void* parent, uint64_t startPTimer) {
    std::lock_guard lock(mutex_);
    // NCCL names the operation's handle, possibly after the operation was
    // stopped: follow it only if it is still open here.
    const auto it = open_.find(static_cast<Op*>(parent));
    if (it == open_.end()) return nullptr;
    Op* op = *it;
    auto* ch = new Channel{};
    ch->kind = Event::ChannelEvent;
    ch->owner = this;
    ch->parent = op;
    ++op->channelsStarted;
    const auto t = static_cast<int64_t>(startPTimer);
    if (startPTimer && (op->gpuStart < 0 || t < op->gpuStart)) op->gpuStart = t;
    return ch;
}

void CollectiveTracker::kernelChannelStopped(void* handle, uint64_t stopPTimer) {
    auto* e = static_cast<Event*>(handle);
    if (!e || isGroupHandle(handle) || e->kind != Event::ChannelEvent) return;
    std::lock_guard lock(mutex_);
    Op* op = static_cast<Channel*>(e)->parent;
    const auto t = static_cast<int64_t>(stopPTimer);
    if (stopPTimer && t > op->gpuEnd) op->gpuEnd = t;
}

void CollectiveTracker::stop(void* handle) {
    if (!handle || isGroupHandle(handle)) return;
    auto* e = static_cast<Event*>(handle);
    std::lock_guard lock(mutex_);
    if (e->kind == Event::ChannelEvent) {
        auto* ch = static_cast<Channel*>(e);
        Op* op = ch->parent;
        delete ch;
        ++op->channelsStopped;
        // This launch's kernel has run, so every earlier launch's has finished.
        if (op->plan > latestRunPlan_) {
            latestRunPlan_ = op->plan;
            emitCompletedBefore(op->plan);
        }
        if (complete(op)) emit(op);
        return;
    }
    auto* op = static_cast<Op*>(e);
    op->stopped = true;  // enqueued; the GPU side may still be running
    if (complete(op)) emit(op);
}

bool CollectiveTracker::complete(const Op* op) const {
    if (!op->stopped || op->channelsStopped < op->channelsStarted) return false;
    if (op->channelsStopped >= op->pending.row.nChannels) return true;
    // Fewer channels reported than announced: done once a later launch ran.
    return op->plan != 0 && op->plan < latestRunPlan_;
}

void CollectiveTracker::emit(Op* op) {
    op->pending.row.gpuStart = op->gpuStart;
    op->pending.row.gpuEnd = op->gpuEnd;
    open_.erase(op);
    emit_(std::move(op->pending));
    delete op;
}

void CollectiveTracker::emitCompletedBefore(uint64_t plan) {
    std::vector<Op*> done;
    for (Op* op : open_)
        if (op->plan != 0 && op->plan < plan && complete(op)) done.push_back(op);
    std::sort(done.begin(), done.end(), [](const Op* a, const Op* b) { return a->order < b->order; });
    for (Op* op : done) emit(op);
}

std::vector<PendingCollective> CollectiveTracker::openRows() {
    std::lock_guard lock(mutex_);
    std::vector<Op*> all(open_.begin(), open_.end());
    std::sort(all.begin(), all.end(), [](const Op* a, const Op* b) { return a->order < b->order; });
    std::vector<PendingCollective> rows;
    for (const Op* op : all) {
        PendingCollective c = op->pending;
        c.row.gpuStart = op->gpuStart;
        c.row.gpuEnd = -1;  // still running: a hung collective looks like this
        rows.push_back(std::move(c));
    }
    return rows;
}

std::vector<PendingCollective> CollectiveTracker::openRowsOfAll() {
    std::lock_guard lock(registryMutex());
    std::vector<PendingCollective> rows;
    for (CollectiveTracker* t : registry())
        for (auto& r : t->openRows()) rows.push_back(std::move(r));
    return rows;
}

void CollectiveTracker::finalize() {
    std::lock_guard lock(mutex_);
    std::vector<Op*> all(open_.begin(), open_.end());
    std::sort(all.begin(), all.end(), [](const Op* a, const Op* b) { return a->order < b->order; });
    for (Op* op : all) emit(op);
}

}  // namespace osc::agent

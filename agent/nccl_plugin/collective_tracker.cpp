#include "agent/nccl_plugin/collective_tracker.h"

#include "agent/nccl_plugin/plugin_handles.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace osc::agent {
namespace {

using nccl::HandleKind;

// Stale KernelCh stops kept to explain orphan channels, and for how many
// launches one may wait for its orphan (NCCL starts the orphan in the proxy
// pass right after the stale stop, so a few launches are plenty).
constexpr size_t kMaxStaleStops = 64;
constexpr uint64_t kStaleStopLaunches = 16;

int p2pDirection(const char* func) {
    const std::string_view f = func ? func : "";
    return f == "Send" ? 0 : f == "Recv" ? 1 : 2;
}

}  // namespace

size_t ncclDatatypeBytes(const char* datatype) {
    if (!datatype) return 0;
    const std::string_view t(datatype);
    if (t == "ncclInt8" || t == "ncclUint8" || t == "ncclFloat8e4m3" || t == "ncclFloat8e5m2") return 1;
    if (t == "ncclFloat16" || t == "ncclBfloat16") return 2;
    if (t == "ncclInt32" || t == "ncclUint32" || t == "ncclFloat32") return 4;
    if (t == "ncclInt64" || t == "ncclUint64" || t == "ncclFloat64") return 8;
    return 0;
}

CollectiveTracker::CollectiveTracker(uint64_t commHash, int nranks, int rank, Emit emit, uint32_t serial,
                                     IgnoredCounter* ignored)
    : commHash_(commHash),
      nranks_(nranks),
      rank_(rank),
      serial_(serial),
      emit_(std::move(emit)),
      counter_(ignored ? ignored : &own_) {}

CollectiveTracker::~CollectiveTracker() { finalize(); }

uint64_t CollectiveTracker::liveId(const void* handle, unsigned kind) {
    if (!handle) {
        ignore(IgnoredReason::NcclNullHandle);
        return 0;
    }
    const auto f = nccl::readHandle(handle);
    if (!f || f->comm != serial_ || static_cast<unsigned>(f->kind) != kind) {
        ignore(IgnoredReason::NcclForeignHandle);
        return 0;
    }
    if (finalized_) {
        ignore(IgnoredReason::NcclFinalizedHandle);
        return 0;
    }
    const bool live =
        kind == static_cast<unsigned>(HandleKind::Operation) ? ops_.count(f->id) != 0 : channels_.count(f->id) != 0;
    if (live) return f->id;
    ignore(f->id < nextId_ ? IgnoredReason::NcclStaleHandle : IgnoredReason::NcclUnknownHandle);
    return 0;
}

uint64_t CollectiveTracker::newId() {
    // 2^37 events later the ids start again; one still open is never reused.
    if (nextId_ > nccl::kMaxHandleId) nextId_ = 1;
    while (ops_.count(nextId_) || channels_.count(nextId_)) ++nextId_;
    return nextId_++;
}

uint64_t CollectiveTracker::planOf(void* group) {
    if (!group) return 0;
    const auto f = nccl::readHandle(group);
    if (!f || f->kind != HandleKind::Group || f->comm != serial_) {
        ignore(IgnoredReason::NcclForeignHandle);
        return 0;
    }
    if (f->id > plans_) {
        ignore(IgnoredReason::NcclUnknownHandle);
        return 0;
    }
    return f->id;
}

void* CollectiveTracker::startGroup() {
    std::lock_guard lock(mutex_);
    if (finalized_) {
        ignore(IgnoredReason::NcclFinalizedHandle);
        return nullptr;
    }
    return nccl::makeHandle(HandleKind::Group, serial_, ++plans_);
}

void* CollectiveTracker::startColl(const CollInfo& info, int64_t nowNs, void* group) {
    Op op;
    CollectiveRow& r = op.pending.row;
    r.seqNumber = info.seqNumber;
    r.count = info.count;
    r.bytes = info.count * ncclDatatypeBytes(info.datatype);
    r.root = info.root;
    r.nChannels = info.nChannels;
    r.enqueue = nowNs;
    op.pending.func = info.func ? info.func : "";
    op.pending.datatype = info.datatype ? info.datatype : "";
    op.pending.algo = info.algo ? info.algo : "";
    op.pending.proto = info.proto ? info.proto : "";
    std::lock_guard lock(mutex_);
    return open(std::move(op), group);
}

void* CollectiveTracker::startP2p(const P2pInfo& info, int64_t nowNs, void* group) {
    Op op;
    CollectiveRow& r = op.pending.row;
    r.count = info.count;
    r.bytes = info.count * ncclDatatypeBytes(info.datatype);
    r.root = info.peer;  // where the capture format keeps a point-to-point call's peer
    r.nChannels = info.nChannels;
    r.enqueue = nowNs;
    op.pending.func = info.func ? info.func : "";
    op.pending.datatype = info.datatype ? info.datatype : "";
    std::lock_guard lock(mutex_);
    if (finalized_) {
        ignore(IgnoredReason::NcclFinalizedHandle);
        return nullptr;
    }
    r.seqNumber = p2pCalls_[{info.peer, p2pDirection(info.func)}]++;
    return open(std::move(op), group);
}

void* CollectiveTracker::open(Op&& op, void* group) {
    if (finalized_) {
        ignore(IgnoredReason::NcclFinalizedHandle);
        return nullptr;
    }
    CollectiveRow& r = op.pending.row;
    r.commHash = commHash_;
    r.rank = rank_;
    r.nranks = nranks_;
    op.plan = planOf(group);
    const uint64_t id = newId();
    ops_.emplace(id, std::move(op));
    return nccl::makeHandle(HandleKind::Operation, serial_, id);
}

void* CollectiveTracker::startKernelChannel(void* parent, uint64_t startPTimer) {
    std::lock_guard lock(mutex_);
    // NCCL names the operation's handle, possibly after the operation was
    // written: follow it only if it is still open here.
    const uint64_t opId = liveId(parent, static_cast<unsigned>(HandleKind::Operation));
    if (!opId) return nullptr;
    Op& op = ops_.at(opId);
    const uint64_t id = newId();
    channels_.emplace(id, opId);
    ++op.channelsStarted;
    const auto t = static_cast<int64_t>(startPTimer);
    if (startPTimer && (op.gpuStart < 0 || t < op.gpuStart)) op.gpuStart = t;
    return nccl::makeHandle(HandleKind::Channel, serial_, id);
}

void CollectiveTracker::kernelChannelStopped(void* handle, uint64_t stopPTimer) {
    std::lock_guard lock(mutex_);
    const uint64_t id = liveId(handle, static_cast<unsigned>(HandleKind::Channel));
    if (!id) {
        // NCCL records, then stops: the stop that follows finds it stale too.
        const auto f = nccl::readHandle(handle);
        if (f && f->comm == serial_ && f->kind == HandleKind::Channel && f->id < nextId_ && !finalized_)
            lastStaleRecordPTimer_ = stopPTimer;
        return;
    }
    Op& op = ops_.at(channels_.at(id));
    const auto t = static_cast<int64_t>(stopPTimer);
    if (stopPTimer && t > op.gpuEnd) op.gpuEnd = t;
}

void CollectiveTracker::stop(void* handle) {
    std::lock_guard lock(mutex_);
    const auto f = nccl::readHandle(handle);
    if (f && f->comm == serial_ && f->kind == HandleKind::Group) {
        // A launch carries no state: nothing to stop.
        if (finalized_)
            ignore(IgnoredReason::NcclFinalizedHandle);
        else if (f->id > plans_)
            ignore(IgnoredReason::NcclUnknownHandle);
        return;
    }
    if (f && f->comm == serial_ && f->kind == HandleKind::Channel) {
        const uint64_t id = liveId(handle, static_cast<unsigned>(HandleKind::Channel));
        if (!id) {
            if (!finalized_ && f->id < nextId_) {
                // A channel stopped twice: the channel NCCL meant may start next
                // and never stop (the orphans of emitOrphansBefore).
                if (staleStops_.size() >= kMaxStaleStops) staleStops_.pop_front();
                staleStops_.push_back({lastStaleRecordPTimer_, latestRunPlan_});
            }
            lastStaleRecordPTimer_ = 0;
            return;
        }
        const uint64_t opId = channels_.at(id);
        channels_.erase(id);
        auto it = ops_.find(opId);
        Op& op = it->second;
        ++op.channelsStopped;
        // This launch's kernel has run, so every earlier launch's has finished.
        if (op.plan > latestRunPlan_) {
            latestRunPlan_ = op.plan;
            emitCompletedBefore(op.plan);
            emitOrphansBefore(op.plan);
        }
        if (complete(op)) emit(it);
        return;
    }
    const uint64_t id = liveId(handle, static_cast<unsigned>(HandleKind::Operation));
    if (!id) return;
    auto it = ops_.find(id);
    if (it->second.stopped) {
        ignore(IgnoredReason::NcclStoppedTwice);
        return;
    }
    it->second.stopped = true;  // enqueued; the GPU side may still be running
    if (complete(it->second)) emit(it);
}

bool CollectiveTracker::complete(const Op& op) const {
    if (!op.stopped || op.channelsStopped < op.channelsStarted) return false;
    if (op.channelsStopped >= op.pending.row.nChannels) return true;
    // Fewer channels reported than announced: done once a later launch ran.
    return op.plan != 0 && op.plan < latestRunPlan_;
}

void CollectiveTracker::emit(std::map<uint64_t, Op>::iterator it) {
    const uint64_t id = it->first;
    Op& op = it->second;
    // Channels still open (finalize, orphans) go with their operation, so a
    // later call naming one is found stale instead of following a dead row.
    if (op.channelsStarted > op.channelsStopped)
        for (auto c = channels_.begin(); c != channels_.end();) c = c->second == id ? channels_.erase(c) : std::next(c);
    op.pending.row.gpuStart = op.gpuStart;
    op.pending.row.gpuEnd = op.gpuEnd;
    PendingCollective row = std::move(op.pending);
    ops_.erase(it);
    try {
        emit_(std::move(row));
    } catch (...) {
        // Out of memory in the consumer: the row is lost, NCCL runs on.
    }
}

void CollectiveTracker::emitCompletedBefore(uint64_t plan) {
    std::vector<std::map<uint64_t, Op>::iterator> done;
    for (auto it = ops_.begin(); it != ops_.end(); ++it)
        if (it->second.plan != 0 && it->second.plan < plan && complete(it->second)) done.push_back(it);
    for (auto it : done) emit(it);
}

void CollectiveTracker::emitOrphansBefore(uint64_t plan) {
    while (!staleStops_.empty() && staleStops_.front().latestRunPlan + kStaleStopLaunches < plan)
        staleStops_.pop_front();
    // An operation two launches back whose kernel has long finished, still
    // holding channels open, while KernelCh stops named channels stopped
    // before: those open channels are the ones NCCL meant to stop. One launch
    // of margin: the proxy may report the channels of neighbouring launches
    // in either order within one pass.
    std::vector<std::map<uint64_t, Op>::iterator> orphaned;
    size_t credits = staleStops_.size();
    for (auto it = ops_.begin(); it != ops_.end() && credits > 0; ++it) {
        const Op& op = it->second;
        const auto open = static_cast<size_t>(std::max(0, op.channelsStarted - op.channelsStopped));
        if (!op.stopped || op.plan == 0 || op.plan + 1 >= plan || open == 0 || open > credits) continue;
        credits -= open;
        orphaned.push_back(it);
    }
    for (auto it : orphaned) {
        Op& op = it->second;
        const int open = op.channelsStarted - op.channelsStopped;
        for (int i = 0; i < open; ++i) {
            // The stale stop's timer is when the orphan channel really ended.
            const auto t = static_cast<int64_t>(staleStops_.front().stopPTimer);
            staleStops_.pop_front();
            if (t > op.gpuEnd && (op.gpuStart < 0 || t >= op.gpuStart)) op.gpuEnd = t;
        }
        counter_->add(IgnoredReason::NcclOrphanChannel, static_cast<uint64_t>(open));
        emit(it);
    }
}

std::vector<PendingCollective> CollectiveTracker::openRows() {
    std::lock_guard lock(mutex_);
    std::vector<PendingCollective> rows;
    for (const auto& [id, op] : ops_) {
        PendingCollective c = op.pending;
        c.row.gpuStart = op.gpuStart;
        c.row.gpuEnd = -1;  // still running: a hung collective looks like this
        rows.push_back(std::move(c));
    }
    return rows;
}

bool CollectiveTracker::isOpenOperation(const void* handle) {
    const auto f = nccl::readHandle(handle);
    if (!f || f->kind != HandleKind::Operation || f->comm != serial_) return false;
    std::lock_guard lock(mutex_);
    return ops_.count(f->id) != 0;
}

void CollectiveTracker::finalize() {
    std::lock_guard lock(mutex_);
    if (finalized_) return;
    finalized_ = true;
    while (!ops_.empty()) emit(ops_.begin());
    channels_.clear();
    staleStops_.clear();
}

}  // namespace osc::agent

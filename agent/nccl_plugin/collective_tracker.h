// Turns NCCL profiler events into one row per operation: a collective (Coll
// event) or one send or receive (P2p event). The event gives what was asked
// (function, count, type, peer or root, algorithm...), its stop marks the
// enqueue, and the KernelCh events under it give GPU start/stop per channel.
// A row is complete when its operation is stopped and every channel it
// announced has stopped, or at finalize.
//
// NCCL 2.28 may announce more channels for a send or receive than it reports
// (a channel with nothing to move gets no KernelCh event; NCCL issue 2056), so
// a row is also complete once every channel it did report has stopped and a
// kernel launched after its own has run: a communicator's kernels run one at
// a time, in launch order. Group events give that launch order: NCCL starts
// one per kernel launch ("plan"), before the operations of that launch.
//
// Every handle given out is a tagged id (plugin_handles.h), and every handle
// taken back is checked against what is open here before anything is done
// with it: a null, foreign, unknown, stale or twice-stopped one is counted
// (IgnoredCalls) and ignored. NCCL 2.28.9's proxy thread can stop a KernelCh
// event with the handle of a channel stopped long ago (it tests "kernel
// started" and "kernel finished" with two separate loads, and never clears
// the slot's old handle), then start the channel it meant, which nobody will
// stop: such an orphan channel does not hold its row open for ever (see
// emitOrphansBefore).
#pragma once

#include "agent/core/ignored_calls.h"
#include "agent/core/pending_collective.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace osc::agent {

// Bytes per element of an NCCL datatype name ("ncclFloat32" -> 4); 0 if unknown.
size_t ncclDatatypeBytes(const char* datatype);

// One per communicator (NCCL's `init` context).
class CollectiveTracker {
public:
    using Emit = std::function<void(PendingCollective&&)>;
    // `serial` names the communicator in its handles (1 .. 2^24-1; the
    // plugin gives each communicator of the process its own). Refused calls
    // are counted in `ignored`, else in a counter of the tracker's own.
    CollectiveTracker(uint64_t commHash, int nranks, int rank, Emit emit, uint32_t serial = 1,
                      IgnoredCounter* ignored = nullptr);
    ~CollectiveTracker();
    CollectiveTracker(const CollectiveTracker&) = delete;
    CollectiveTracker& operator=(const CollectiveTracker&) = delete;

    struct CollInfo {
        uint64_t seqNumber = 0;
        const char *func = nullptr, *datatype = nullptr, *algo = nullptr, *proto = nullptr;
        size_t count = 0;
        int root = -1, nChannels = 0;
    };

    struct P2pInfo {
        const char *func = nullptr, *datatype = nullptr;  // func: "Send" or "Recv"
        size_t count = 0;
        int peer = -1, nChannels = 0;  // peer: rank in the communicator
    };

    // Each returns the event handle NCCL hands back in stop/record calls;
    // nullptr once finalized. `group` is the handle startGroup gave the
    // operation's kernel launch (nullptr: launch unknown; anything else is
    // counted and taken as unknown).
    void* startGroup();
    void* startColl(const CollInfo& info, int64_t nowNs, void* group = nullptr);
    // NCCL numbers no point-to-point call; the row's seqNumber counts this
    // rank's calls of the same direction with the same peer, from 0.
    void* startP2p(const P2pInfo& info, int64_t nowNs, void* group = nullptr);
    // nullptr when `parent` is no open operation of this tracker.
    void* startKernelChannel(void* parent, uint64_t startPTimer);
    void stop(void* handle);
    void kernelChannelStopped(void* handle, uint64_t stopPTimer);
    // Emits every operation still open (communicator destroyed); every call
    // after it is counted and ignored.
    void finalize();
    // Copies of the operations still open, as rows with no GPU end: what a
    // capture closing now writes of them (they stay open here).
    std::vector<PendingCollective> openRows();
    // Whether `handle` is an operation of this tracker not yet written.
    bool isOpenOperation(const void* handle);

    uint32_t serial() const { return serial_; }
    IgnoredCalls ignored() const { return counter_->snapshot(); }

private:
    struct Op {
        PendingCollective pending;
        uint64_t plan = 0;  // its kernel launch (startGroup's count); 0 unknown
        int channelsStarted = 0, channelsStopped = 0;
        bool stopped = false;
        int64_t gpuStart = -1, gpuEnd = -1;
    };
    // A KernelCh stop that named a channel stopped before: the channel NCCL
    // meant will start without a stop to come (see the header comment).
    struct StaleStop {
        uint64_t stopPTimer = 0;  // what NCCL recorded just before it
        uint64_t latestRunPlan = 0;
    };

    void ignore(IgnoredReason why) { counter_->add(why); }
    // The id of the live event of `kind` that `handle` names, else 0 after
    // counting why not. Caller holds mutex_.
    uint64_t liveId(const void* handle, unsigned kind);
    uint64_t newId();
    uint64_t planOf(void* group);  // caller holds mutex_
    void* open(Op&& op, void* group);
    bool complete(const Op& op) const;
    void emit(std::map<uint64_t, Op>::iterator it);  // caller holds mutex_
    void emitCompletedBefore(uint64_t plan);         // caller holds mutex_
    void emitOrphansBefore(uint64_t plan);           // caller holds mutex_

    const uint64_t commHash_;
    const int nranks_, rank_;
    const uint32_t serial_;
    Emit emit_;
    IgnoredCounter own_;
    IgnoredCounter* const counter_;
    std::mutex mutex_;
    bool finalized_ = false;
    // Operations not emitted yet, by id: ids grow with each start, so this is
    // also start order (the emission order at finalize).
    std::map<uint64_t, Op> ops_;
    std::unordered_map<uint64_t, uint64_t> channels_;   // open channel id -> its operation's id
    uint64_t nextId_ = 1;                               // ids below it have been given out
    uint64_t plans_ = 0;                                // kernel launches seen (Group events)
    uint64_t latestRunPlan_ = 0;                        // the latest launch one of whose channels has stopped
    std::map<std::pair<int, int>, uint64_t> p2pCalls_;  // (peer, direction) -> calls so far
    std::deque<StaleStop> staleStops_;
    uint64_t lastStaleRecordPTimer_ = 0;
};

}  // namespace osc::agent

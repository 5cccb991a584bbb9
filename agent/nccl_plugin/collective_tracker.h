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
#pragma once

#include "agent/core/capture_session.h"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace osc::agent {

// Bytes per element of an NCCL datatype name ("ncclFloat32" -> 4); 0 if unknown.
size_t ncclDatatypeBytes(const char* datatype);

// One per communicator (NCCL's `init` context).
class CollectiveTracker {
public:
    using Emit = std::function<void(PendingCollective&&)>;
    CollectiveTracker(uint64_t commHash, int nranks, int rank, Emit emit);
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

    // Returns event handles NCCL hands back in stop/record calls. `group` is
    // the handle startGroup gave the operation's kernel launch (nullptr or
    // anything else: launch unknown).
    void* startGroup();
    void* startColl(const CollInfo& info, int64_t nowNs, void* group = nullptr);
    // NCCL numbers no point-to-point call; the row's seqNumber counts this
    // rank's calls of the same direction with the same peer, from 0.
    void* startP2p(const P2pInfo& info, int64_t nowNs, void* group = nullptr);
    // nullptr when `parent` is no open operation of this tracker.
    void* startKernelChannel(void* parent, uint64_t startPTimer);
    void stop(void* handle);
    void kernelChannelStopped(void* handle, uint64_t stopPTimer);
    // Emits every operation still open (communicator destroyed).
    void finalize();
    // Copies of the operations still open, as rows with no GPU end: what a
    // capture closing now writes of them (they stay open here).
    std::vector<PendingCollective> openRows();
    // openRows() of every communicator alive in this process.
    static std::vector<PendingCollective> openRowsOfAll();

    // The tracker that created an event handle (NCCL gives stop/record calls
    // only the handle); nullptr for nullptr and for group handles, which
    // need no stop.
    static CollectiveTracker* ownerOf(void* handle);

private:
    struct Event;
    struct Op;
    struct Channel;
    void* open(Op* op, void* group);
    bool complete(const Op* op) const;
    void emit(Op* op);                        // caller holds mutex_
    void emitCompletedBefore(uint64_t plan);  // caller holds mutex_

    const uint64_t commHash_;
    const int nranks_, rank_;
    Emit emit_;
    std::mutex mutex_;
    // Operations not emitted yet; also tells a KernelCh event's parent from
    // a stale or foreign pointer before it is followed.
    std::unordered_set<Op*> open_;
    uint64_t started_ = 0;                              // operations started: their emission order at finalize
    uint64_t plans_ = 0;                                // kernel launches seen (Group events)
    uint64_t latestRunPlan_ = 0;                        // the latest launch one of whose channels has stopped
    std::map<std::pair<int, int>, uint64_t> p2pCalls_;  // (peer, direction) -> calls so far
};

}  // namespace osc::agent

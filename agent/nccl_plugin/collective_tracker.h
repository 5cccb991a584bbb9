// Turns NCCL profiler events into one row per collective: the Coll event
// gives what was asked (function, count, type, algorithm...), its stop marks
// the enqueue, and the KernelCh events under it give GPU start/stop per
// channel. The row is complete when the collective is stopped and every
// channel it announced has stopped, or at finalize.
#pragma once

#include "agent/core/capture_session.h"

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace osc::agent {

// Bytes per element of an NCCL datatype name ("ncclFloat32" -> 4); 0 if unknown.
size_t ncclDatatypeBytes(const char* datatype);

// One per communicator (NCCL's `init` context).
class CollectiveTracker {
public:
    using Emit = std::function<void(PendingCollective&&)>;
    CollectiveTracker(uint64_t commHash, int nranks, int rank, Emit emit);
    ~CollectiveTracker();

    struct CollInfo {
        uint64_t seqNumber = 0;
        const char *func = nullptr, *datatype = nullptr, *algo = nullptr, *proto = nullptr;
        size_t count = 0;
        int root = -1, nChannels = 0;
    };

    // Returns event handles NCCL hands back in stop/record calls.
    void* startColl(const CollInfo& info, int64_t nowNs);
    void* startKernelChannel(void* collHandle, uint64_t startPTimer);
    void stop(void* handle);
    void kernelChannelStopped(void* handle, uint64_t stopPTimer);
    // Emits every collective still open (communicator destroyed).
    void finalize();

    // The tracker that created an event handle (NCCL gives stop/record calls
    // only the handle); nullptr for nullptr.
    static CollectiveTracker* ownerOf(void* handle);

private:
    struct Event;
    struct Coll;
    struct Channel;
    void maybeEmit(Coll* coll);  // caller holds mutex_

    const uint64_t commHash_;
    const int nranks_, rank_;
    Emit emit_;
    std::mutex mutex_;
    Coll* open_ = nullptr;  // intrusive list of unfinished collectives
};

}  // namespace osc::agent

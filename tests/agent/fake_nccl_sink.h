// A fake NCCL communicator (fake_nccl.h) on the plugin's own tables
// (nccl::profilerV5 / profilerV4, made as nccl_plugin.cpp makes the exported
// ones) whose `init` hands the rows to the test instead of the agent.
#pragma once

#include "agent/nccl_plugin/profiler_callbacks.h"
#include "tests/agent/fake_nccl.h"

#include <mutex>
#include <vector>

namespace osc::agent::test {

namespace detail {
// The sink of the communicator being created on this thread: `init` is a
// plain function pointer, and NCCL calls it on the creating thread.
inline thread_local const CollectiveTracker::Emit* t_sink = nullptr;

inline ncclResult_t initToSinkV5(void** context, uint64_t commId, int* mask, const char* name, int nNodes, int nranks,
                                 int rank, ncclDebugLogger_t logfn) {
    return nccl::initContext(context, mask, nccl::Abi::V5, {commId, name, nNodes, nranks, rank, logfn}, *t_sink);
}
inline ncclResult_t initToSinkV4(void** context, int* mask, const char* name, uint64_t commHash, int nNodes, int nranks,
                                 int rank, ncclDebugLogger_t logfn) {
    return nccl::initContext(context, mask, nccl::Abi::V4, {commHash, name, nNodes, nranks, rank, logfn}, *t_sink);
}

// The table of `abi`; its `init` reads `sink`, which must outlive the call.
inline NcclPlugin pluginWithSink(NcclAbi abi, const CollectiveTracker::Emit& sink) {
    t_sink = &sink;
    if (abi == NcclAbi::V5) return nccl::profilerV5(initToSinkV5);
    return nccl::profilerV4(initToSinkV4);
}
}  // namespace detail

// The rows a sink got, from any thread.
struct SinkRows {
    std::mutex mutex;
    std::vector<PendingCollective> rows;
    CollectiveTracker::Emit sink() {
        return [this](PendingCollective&& c) {
            std::lock_guard lock(mutex);
            rows.push_back(std::move(c));
        };
    }
    size_t size() {
        std::lock_guard lock(mutex);
        return rows.size();
    }
};

class SinkNcclComm : public FakeNcclComm {
public:
    SinkNcclComm(NcclAbi abi, uint64_t commHash, int nranks, int rank, const CollectiveTracker::Emit& sink)
        : FakeNcclComm(detail::pluginWithSink(abi, sink), commHash, nranks, rank) {}
};

}  // namespace osc::agent::test

// The exported NCCL profiler plugin structs (ncclProfiler_v5 for NCCL 2.28,
// ncclProfiler_v4 for 2.27). NCCL looks them up by name in the library that
// NCCL_PROFILER_PLUGIN names, which `overlapscope run` points at the agent,
// and takes the newest version it knows: NCCLs after 2.28 (profiler ABI 6
// and 7) take v5 and copy their events into its descriptors.
#include "agent/core/agent.h"
#include "agent/core/agent_runtime.h"
#include "agent/nccl_plugin/profiler_callbacks.h"

namespace osc::agent {
namespace {

// NCCL's event mask is one int for the process, which another communicator
// may have raised already: it is never written here unless a communicator
// was made, and then only raised (profiler_callbacks.h).
ncclResult_t initCommon(void** context, int* mask, uint64_t commHash, int nranks, int rank) {
    if (!context) return 0;
    *context = nullptr;
    Agent* agent = ensureAgent();
    if (!agent) return 0;  // success with no events of ours: NCCL runs as without a plugin
    agent->setNcclPlugin(&nccl::openRowsOfAll, &nccl::ignoredCallsOfAll);
    return nccl::initContext(context, mask, commHash, nranks, rank,
                             [agent](PendingCollective&& c) { agent->submitCollective(std::move(c)); });
}

ncclResult_t initV5(void** context, uint64_t commId, int* mask, const char*, int, int nranks, int rank,
                    ncclDebugLogger_t) {
    return initCommon(context, mask, commId, nranks, rank);
}

ncclResult_t initV4(void** context, int* mask, const char*, uint64_t commHash, int, int nranks, int rank,
                    ncclDebugLogger_t) {
    return initCommon(context, mask, commHash, nranks, rank);
}

}  // namespace
}  // namespace osc::agent

extern "C" {

__attribute__((visibility("default"))) constinit ncclProfiler_v5_t ncclProfiler_v5 =
    osc::agent::nccl::profilerV5(osc::agent::initV5);

__attribute__((visibility("default"))) constinit ncclProfiler_v4_t ncclProfiler_v4 =
    osc::agent::nccl::profilerV4(osc::agent::initV4);

}  // extern "C"

// The exported NCCL profiler plugin structs (ncclProfiler_v5 for NCCL 2.28,
// ncclProfiler_v4 for 2.27). NCCL looks them up by name in the library that
// NCCL_PROFILER_PLUGIN names, which `overlapscope run` points at the agent,
// and takes the newest version it knows: NCCLs after 2.28 (profiler ABI 6
// and 7) take v5 and copy their events into its descriptors.
#include "agent/core/agent.h"
#include "agent/core/agent_runtime.h"
#include "agent/nccl_plugin/profiler_callbacks.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

namespace osc::agent {
namespace {

bool isOurs(const nccl::ChainedPlugin& p);

// OVERLAPSCOPE_NCCL_PLUGIN_CHAIN: the profiler plugin the job had named
// (`overlapscope run` passes NCCL_PROFILER_PLUGIN on here, or
// --nccl-plugin-chain), loaded once, before the first communicator.
void chainFromEnvironment() {
    static std::once_flag once;
    std::call_once(once, [] {
        const char* spec = std::getenv("OVERLAPSCOPE_NCCL_PLUGIN_CHAIN");
        if (!spec || !*spec) return;
        std::string error;
        auto plugin = nccl::openChainedPlugin(spec, error);
        if (!plugin) {
            std::fprintf(stderr, "overlapscope-agent: NCCL profiler plugin %s not chained: %s\n", spec, error.c_str());
            return;
        }
        if (isOurs(*plugin)) return;  // named ourselves: nothing to forward to
        nccl::chainPlugin(std::make_shared<const nccl::ChainedPlugin>(std::move(*plugin)));
    });
}

// NCCL's event mask is one int for the process, which another communicator
// may have raised already: it is never written here unless a communicator
// was made, and then only raised (profiler_callbacks.h).
ncclResult_t initCommon(void** context, int* mask, nccl::Abi abi, const nccl::InitArgs& args) {
    if (!context) return 0;
    *context = nullptr;
    Agent* agent = ensureAgent();
    if (!agent) return 0;  // success with no events of ours: NCCL runs as without a plugin
    agent->setNcclPlugin(&nccl::openRowsOfAll, &nccl::ignoredCallsOfAll);
    chainFromEnvironment();
    return nccl::initContext(context, mask, abi, args,
                             [agent](PendingCollective&& c) { agent->submitCollective(std::move(c)); });
}

ncclResult_t initV5(void** context, uint64_t commId, int* mask, const char* commName, int nNodes, int nranks, int rank,
                    ncclDebugLogger_t logfn) {
    return initCommon(context, mask, nccl::Abi::V5, {commId, commName, nNodes, nranks, rank, logfn});
}

ncclResult_t initV4(void** context, int* mask, const char* commName, uint64_t commHash, int nNodes, int nranks,
                    int rank, ncclDebugLogger_t logfn) {
    return initCommon(context, mask, nccl::Abi::V4, {commHash, commName, nNodes, nranks, rank, logfn});
}

}  // namespace
}  // namespace osc::agent

extern "C" {

__attribute__((visibility("default"))) constinit ncclProfiler_v5_t ncclProfiler_v5 =
    osc::agent::nccl::profilerV5(osc::agent::initV5);

__attribute__((visibility("default"))) constinit ncclProfiler_v4_t ncclProfiler_v4 =
    osc::agent::nccl::profilerV4(osc::agent::initV4);

}  // extern "C"

namespace osc::agent {
namespace {

// The same library loaded again under another name gives our own callbacks.
bool isOurs(const nccl::ChainedPlugin& p) {
    return (p.hasV5 && p.v5.startEvent == ncclProfiler_v5.startEvent) ||
           (p.hasV4 && p.v4.startEvent == ncclProfiler_v4.startEvent);
}

}  // namespace
}  // namespace osc::agent

// Another NCCL profiler plugin behind ours (issue 41, "beside other NCCL
// tools"). NCCL loads one profiler plugin; a job that also runs NCCL
// Inspector, or a plugin of its own, would have to choose. Instead the agent
// loads the other plugin itself (OVERLAPSCOPE_NCCL_PLUGIN_CHAIN, which
// `overlapscope run` sets from a NCCL_PROFILER_PLUGIN the job had, or from
// --nccl-plugin-chain) and forwards every call to it, so that both see
// every event, each with handles of its own:
// - `init`: the other plugin gets its own context and writes its own mask,
//   which is then added to NCCL's (never replacing ours);
// - `startEvent`: NCCL gets one handle (a link) naming our event and the
//   other plugin's; the descriptor's parents, which NCCL fills with links,
//   are handed to each plugin as its own handles; event types only the other
//   plugin asked for go to it alone;
// - `stopEvent`, `recordEventState`: forwarded with the other plugin's
//   handle; a link that is unknown, stale or already stopped is counted and
//   goes to neither plugin (so the other plugin is spared NCCL's stale
//   KernelCh stop as well);
// - `finalize`: the other plugin's context is finalized with ours.
// Only the ABI version NCCL called us with is forwarded (ncclProfiler_v5 to
// a plugin's v5, v4 to its v4); a library without it is not chained.
#pragma once

#include "agent/core/ignored_calls.h"
#include "agent/nccl_plugin/nccl_profiler_abi.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace osc::agent::nccl {

// `init`'s arguments as NCCL passes them (both versions carry the same).
struct InitArgs {
    uint64_t commHash = 0;
    const char* commName = nullptr;
    int nNodes = 1, nranks = 1, rank = 0;
    ncclDebugLogger_t logfn = nullptr;
};

// The other plugin's tables; either may be missing.
struct ChainedPlugin {
    std::string name;  // as asked: a path, a library name, or NCCL's short name
    ncclProfiler_v5_t v5{};
    ncclProfiler_v4_t v4{};
    bool hasV5 = false, hasV4 = false;
};

// Opens a profiler plugin library as NCCL names one: a path or a library
// name, else a short name X for libnccl-profiler-X.so. nullopt, with a
// one-line `error`, when it cannot be opened or has neither table. The
// library stays loaded for the life of the process.
std::optional<ChainedPlugin> openChainedPlugin(const std::string& spec, std::string& error);

// One communicator's share of the other plugin.
class ChainedComm {
public:
    // Calls the other plugin's `init` (the `abi` version) with a mask of its
    // own; ok() is false when it failed, or the plugin lacks that version.
    ChainedComm(std::shared_ptr<const ChainedPlugin> plugin, Abi abi, uint32_t serial, const InitArgs& args,
                IgnoredCounter& ignored);
    ~ChainedComm();
    ChainedComm(const ChainedComm&) = delete;
    ChainedComm& operator=(const ChainedComm&) = delete;

    bool ok() const { return initOk_; }
    // Why not ok(), in words.
    std::string failure() const;
    int mask() const { return mask_; }
    Abi abi() const { return abi_; }

    // A parent handle in a descriptor, as each plugin knows it. A link of
    // this communicator gives both handles; anything not ours (NCCL's own
    // pointers, another process's handles) goes to both as it was. known is
    // false, counted, for a link that is unknown or gone.
    struct Parent {
        void* ours = nullptr;
        void* theirs = nullptr;
        bool known = true;
    };
    Parent parent(void* value);

    // Starts the event in the other plugin when it asked for its type;
    // `descr` (ncclProfilerEventDescr_v4_t or _v5_t, per abi()) carries its
    // own parents already.
    void* startTheirs(uint64_t type, void* descr);
    // The handle NCCL gets for an event of both (nullptr when neither has it).
    void* link(void* ours, void* theirs, uint64_t type);

    // stopEvent / recordEventState on a link: the other plugin's share is
    // done here; returns our handle to apply ours to (nullptr: nothing, the
    // link was refused and counted).
    void* stop(void* link);
    void* record(void* link, int eState, ncclProfilerEventStateArgs_v5_t* args);
    // The other plugin's finalize (once): no call reaches it during or after.
    void finalize();

private:
    struct Link {
        void* ours = nullptr;
        void* theirs = nullptr;
        uint64_t type = 0;
        bool stopped = false;
    };
    // The link's id if it is one of this communicator's and open (or, with
    // `stoppedToo`, stopped but kept as a parent); counts why not.
    uint64_t find(const void* link, bool stoppedToo, Link& out);
    // Runs `call` into the other plugin unless it was finalized; calls run
    // side by side, never beside its finalize.
    template <typename Call>
    void callTheirs(Call&& call);

    const std::shared_ptr<const ChainedPlugin> plugin_;
    const Abi abi_;
    const uint32_t serial_;
    IgnoredCounter& ignored_;
    void* context_ = nullptr;
    bool initOk_ = false;
    int mask_ = 0;
    std::mutex mutex_;
    bool finalized_ = false;
    std::shared_mutex callMutex_;
    bool theirsFinalized_ = false;
    std::unordered_map<uint64_t, Link> links_;
    // Stopped links kept because NCCL names them as parents after their stop
    // (a Coll's kernel channels come after it is stopped): the newest
    // kMaxStoppedParents of them.
    std::deque<uint64_t> stoppedParents_;
    uint64_t nextId_ = 1;
};

}  // namespace osc::agent::nccl

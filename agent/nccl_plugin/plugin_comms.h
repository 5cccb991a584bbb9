// The communicators the NCCL plugin serves in this process, found by the
// serial that their contexts and event handles carry (plugin_handles.h).
// NCCL hands contexts and handles back from many threads, also around a
// communicator's finalize: a communicator is shared, so a call that found
// it before finalize took it out still works on a live object, which then
// counts the call as made after finalize; a call after that finds nothing
// and is counted here. Nothing NCCL gives is ever followed as a pointer.
#pragma once

#include "agent/core/ignored_calls.h"
#include "agent/nccl_plugin/collective_tracker.h"
#include "agent/nccl_plugin/plugin_chain.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace osc::agent::nccl {

// One communicator as the plugin knows it: our rows, and the other
// plugin's share when one is chained (plugin_chain.h).
struct PluginComm {
    PluginComm(uint32_t serial, uint64_t commHash, int nranks, int rank, CollectiveTracker::Emit emit,
               IgnoredCounter& ignored)
        : tracker(commHash, nranks, rank, std::move(emit), serial, &ignored) {}
    CollectiveTracker tracker;
    std::unique_ptr<ChainedComm> chain;  // null: no other plugin, or its init failed
};

class PluginComms {
public:
    PluginComms() = default;
    PluginComms(const PluginComms&) = delete;
    PluginComms& operator=(const PluginComms&) = delete;

    // The process's own. Never destroyed: NCCL may call after exit handlers ran.
    static PluginComms& process();

    // A new communicator (and the chained plugin's `init` for it, of ABI
    // `abi`); its context handle, nullptr when none can be made.
    void* open(Abi abi, const InitArgs& args, CollectiveTracker::Emit emit);
    // The mask bits the chained plugin asked for on `context` (0 without one).
    int chainedMask(const void* context);
    // The plugin every later communicator forwards to (nullptr: none).
    void chain(std::shared_ptr<const ChainedPlugin> plugin);
    bool chained() const;
    // The live communicator a context names. nullptr for a null context (our
    // own `init` gave it) and, counted, for anything else not live.
    std::shared_ptr<PluginComm> byContext(const void* context);
    // The live communicator that gave out an event handle; nullptr, counted, otherwise.
    std::shared_ptr<PluginComm> byHandle(const void* handle);
    // Takes the communicator out (NCCL's finalize); nullptr, counted, when
    // the context names none that is live (finalized twice, say).
    std::shared_ptr<PluginComm> close(const void* context);

    // openRows() of every live communicator.
    std::vector<PendingCollective> openRows() const;
    IgnoredCalls ignored() const { return ignored_.snapshot(); }
    size_t liveCount() const;

private:
    // The communicator of `serial`, or nullptr after counting `notLive`'s
    // reason: finalized when the serial was given out, else `unknown`.
    std::shared_ptr<PluginComm> live(uint32_t serial, IgnoredReason unknown);
    // The serial a context names, or 0 after counting it as unknown.
    uint32_t contextSerial(const void* context);

    mutable std::shared_mutex mutex_;
    std::unordered_map<uint32_t, std::shared_ptr<PluginComm>> live_;
    uint32_t next_ = 1;  // serials below it were given out
    std::shared_ptr<const ChainedPlugin> chain_;
    std::atomic<bool> chainFailureSaid_{false};  // one line per process
    bool wrapped_ = false;
    IgnoredCounter ignored_;
};

}  // namespace osc::agent::nccl

#include "agent/nccl_plugin/plugin_comms.h"

#include "agent/nccl_plugin/plugin_handles.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <new>

namespace osc::agent::nccl {

PluginComms& PluginComms::process() {
    static auto* comms = new PluginComms;
    return *comms;
}

void* PluginComms::open(Abi abi, const InitArgs& args, CollectiveTracker::Emit emit) {
    uint32_t serial = 0;
    std::shared_ptr<const ChainedPlugin> chained;
    std::shared_ptr<PluginComm> comm;
    {
        std::unique_lock lock(mutex_);
        if (live_.size() >= kMaxCommSerial) return nullptr;
        // 2^24 communicators later the serials start again, skipping live ones.
        while (next_ == 0 || next_ > kMaxCommSerial || live_.count(next_)) {
            if (next_ == 0 || next_ > kMaxCommSerial) {
                next_ = 1;
                wrapped_ = true;
            } else {
                ++next_;
            }
        }
        serial = next_++;
        chained = chain_;
        try {
            comm =
                std::make_shared<PluginComm>(serial, args.commHash, args.nranks, args.rank, std::move(emit), ignored_);
        } catch (const std::bad_alloc&) {
            return nullptr;
        }
    }
    // The other plugin's init, outside our lock: it may take its time.
    if (chained) {
        auto share = std::make_unique<ChainedComm>(chained, abi, serial, args, ignored_);
        if (share->ok())
            comm->chain = std::move(share);
        else if (!chainFailureSaid_.exchange(true))
            std::fprintf(stderr, "overlapscope-agent: NCCL profiler plugin %s not chained: %s\n", chained->name.c_str(),
                         share->failure().c_str());
    }
    std::unique_lock lock(mutex_);
    live_.emplace(serial, std::move(comm));
    return makeHandle(HandleKind::Context, serial, 1);
}

int PluginComms::chainedMask(const void* context) {
    const auto f = readHandle(context);
    if (!f || f->kind != HandleKind::Context) return 0;
    std::shared_lock lock(mutex_);
    const auto it = live_.find(f->comm);
    return it != live_.end() && it->second->chain ? it->second->chain->mask() : 0;
}

void PluginComms::chain(std::shared_ptr<const ChainedPlugin> plugin) {
    std::unique_lock lock(mutex_);
    chain_ = std::move(plugin);
}

bool PluginComms::chained() const {
    std::shared_lock lock(mutex_);
    return chain_ != nullptr;
}

std::shared_ptr<PluginComm> PluginComms::live(uint32_t serial, IgnoredReason unknown) {
    {
        std::shared_lock lock(mutex_);
        if (auto it = live_.find(serial); it != live_.end()) return it->second;
        if (serial < next_ || wrapped_) unknown = IgnoredReason::NcclFinalizedHandle;
    }
    ignored_.add(unknown);
    return nullptr;
}

uint32_t PluginComms::contextSerial(const void* context) {
    const auto f = readHandle(context);
    if (f && f->kind == HandleKind::Context && f->id == 1) return f->comm;
    ignored_.add(IgnoredReason::NcclUnknownContext);
    return 0;
}

std::shared_ptr<PluginComm> PluginComms::byContext(const void* context) {
    if (!context) return nullptr;
    const uint32_t serial = contextSerial(context);
    return serial ? live(serial, IgnoredReason::NcclUnknownContext) : nullptr;
}

std::shared_ptr<PluginComm> PluginComms::byHandle(const void* handle) {
    if (!handle) {
        ignored_.add(IgnoredReason::NcclNullHandle);
        return nullptr;
    }
    const auto f = readHandle(handle);
    if (!f || f->kind == HandleKind::Context) {
        ignored_.add(IgnoredReason::NcclForeignHandle);
        return nullptr;
    }
    return live(f->comm, IgnoredReason::NcclUnknownHandle);
}

std::shared_ptr<PluginComm> PluginComms::close(const void* context) {
    if (!context) return nullptr;
    const uint32_t serial = contextSerial(context);
    if (!serial) return nullptr;
    {
        std::unique_lock lock(mutex_);
        if (auto it = live_.find(serial); it != live_.end()) {
            std::shared_ptr<PluginComm> comm = std::move(it->second);
            live_.erase(it);
            return comm;
        }
    }
    return live(serial, IgnoredReason::NcclUnknownContext);  // counts why
}

std::vector<PendingCollective> PluginComms::openRows() const {
    std::map<uint32_t, std::shared_ptr<PluginComm>> comms;  // by serial: creation order
    {
        std::shared_lock lock(mutex_);
        comms.insert(live_.begin(), live_.end());
    }
    std::vector<PendingCollective> rows;
    for (const auto& [serial, comm] : comms)
        for (auto& r : comm->tracker.openRows()) rows.push_back(std::move(r));
    return rows;
}

size_t PluginComms::liveCount() const {
    std::shared_lock lock(mutex_);
    return live_.size();
}

}  // namespace osc::agent::nccl

#include "agent/nccl_plugin/plugin_comms.h"

#include "agent/nccl_plugin/plugin_handles.h"

#include <map>
#include <mutex>
#include <new>

namespace osc::agent::nccl {

PluginComms& PluginComms::process() {
    static auto* comms = new PluginComms;
    return *comms;
}

void* PluginComms::open(uint64_t commHash, int nranks, int rank, CollectiveTracker::Emit emit) {
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
    const uint32_t serial = next_++;
    try {
        live_.emplace(serial, std::make_shared<PluginComm>(serial, commHash, nranks, rank, std::move(emit), ignored_));
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
    return makeHandle(HandleKind::Context, serial, 1);
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

std::shared_ptr<PluginComm> PluginComms::byContext(const void* context) {
    if (!context) return nullptr;
    const auto f = readHandle(context);
    if (!f || f->kind != HandleKind::Context || f->id != 1) {
        ignored_.add(IgnoredReason::NcclUnknownContext);
        return nullptr;
    }
    return live(f->comm, IgnoredReason::NcclUnknownContext);
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
    const auto f = readHandle(context);
    if (!f || f->kind != HandleKind::Context || f->id != 1) {
        ignored_.add(IgnoredReason::NcclUnknownContext);
        return nullptr;
    }
    {
        std::unique_lock lock(mutex_);
        if (auto it = live_.find(f->comm); it != live_.end()) {
            std::shared_ptr<PluginComm> comm = std::move(it->second);
            live_.erase(it);
            return comm;
        }
    }
    return live(f->comm, IgnoredReason::NcclUnknownContext);  // counts why
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

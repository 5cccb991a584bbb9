#include "agent/nccl_plugin/plugin_chain.h"

#include "agent/nccl_plugin/plugin_handles.h"

#include <dlfcn.h>

namespace osc::agent::nccl {
namespace {

// Stopped events kept as possible parents, per communicator.
constexpr size_t kMaxStoppedParents = 1u << 14;

// Types no later event names as its parent: their link goes at their stop.
bool namedAsParent(uint64_t type) {
    return (type & (ncclProfileKernelCh | ncclProfileKernelLaunch | ncclProfileNetPlugin | ncclProfileProxyCtrl)) == 0;
}

void* openLibrary(const std::string& spec, std::string& error) {
    if (void* lib = ::dlopen(spec.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    error = ::dlerror() ? ::dlerror() : "cannot be opened";
    // NCCL's short names: "inspector" is libnccl-profiler-inspector.so.
    const bool shortName = spec.find('/') == std::string::npos && spec.rfind("lib", 0) != 0 &&
                           (spec.size() < 3 || spec.compare(spec.size() - 3, 3, ".so") != 0);
    if (!shortName) return nullptr;
    const std::string name = "libnccl-profiler-" + spec + ".so";
    if (void* lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* e = ::dlerror();
    error = e ? e : name + ": cannot be opened";
    return nullptr;
}

}  // namespace

std::optional<ChainedPlugin> openChainedPlugin(const std::string& spec, std::string& error) {
    if (spec.empty()) {
        error = "no library named";
        return std::nullopt;
    }
    void* lib = openLibrary(spec, error);
    if (!lib) return std::nullopt;
    ChainedPlugin p;
    p.name = spec;
    if (const auto* v5 = static_cast<const ncclProfiler_v5_t*>(::dlsym(lib, "ncclProfiler_v5"))) {
        p.v5 = *v5;
        p.hasV5 = p.v5.init && p.v5.startEvent && p.v5.stopEvent && p.v5.recordEventState && p.v5.finalize;
    }
    if (const auto* v4 = static_cast<const ncclProfiler_v4_t*>(::dlsym(lib, "ncclProfiler_v4"))) {
        p.v4 = *v4;
        p.hasV4 = p.v4.init && p.v4.startEvent && p.v4.stopEvent && p.v4.recordEventState && p.v4.finalize;
    }
    if (!p.hasV5 && !p.hasV4) {
        error = spec + ": no ncclProfiler_v5 or ncclProfiler_v4 in it";
        return std::nullopt;
    }
    return p;
}

ChainedComm::ChainedComm(std::shared_ptr<const ChainedPlugin> plugin, Abi abi, uint32_t serial, const InitArgs& args,
                         IgnoredCounter& ignored)
    : plugin_(std::move(plugin)), abi_(abi), serial_(serial), ignored_(ignored) {
    // Its own mask: what it writes can never lower ours (NCCL's is one int).
    int mask = 0;
    ncclResult_t r = 1;
    if (abi == Abi::V5 && plugin_->hasV5)
        r = plugin_->v5.init(&context_, args.commHash, &mask, args.commName, args.nNodes, args.nranks, args.rank,
                             args.logfn);
    else if (abi == Abi::V4 && plugin_->hasV4)
        r = plugin_->v4.init(&context_, &mask, args.commName, args.commHash, args.nNodes, args.nranks, args.rank,
                             args.logfn);
    initOk_ = r == 0;
    mask_ = initOk_ ? mask : 0;
    if (!initOk_) context_ = nullptr;
}

ChainedComm::~ChainedComm() { finalize(); }

std::string ChainedComm::failure() const {
    if (initOk_) return {};
    const bool has = abi_ == Abi::V5 ? plugin_->hasV5 : plugin_->hasV4;
    if (!has) return abi_ == Abi::V5 ? "it has no ncclProfiler_v5 (NCCL calls ours)" : "it has no ncclProfiler_v4";
    return "its init failed";
}

template <typename Call>
void ChainedComm::callTheirs(Call&& call) {
    std::shared_lock lock(callMutex_);
    if (!theirsFinalized_) call();
}

uint64_t ChainedComm::find(const void* link, bool stoppedToo, Link& out) {
    const auto f = readHandle(link);
    if (!f || f->kind != HandleKind::Link || f->comm != serial_) {
        ignored_.add(link ? IgnoredReason::NcclForeignHandle : IgnoredReason::NcclNullHandle);
        return 0;
    }
    if (finalized_) {
        ignored_.add(IgnoredReason::NcclFinalizedHandle);
        return 0;
    }
    const auto it = links_.find(f->id);
    if (it == links_.end()) {
        ignored_.add(f->id < nextId_ ? IgnoredReason::NcclStaleHandle : IgnoredReason::NcclUnknownHandle);
        return 0;
    }
    if (it->second.stopped && !stoppedToo) {
        ignored_.add(IgnoredReason::NcclStoppedTwice);
        return 0;
    }
    out = it->second;
    return f->id;
}

ChainedComm::Parent ChainedComm::parent(void* value) {
    const auto f = readHandle(value);
    if (!value || !f || f->kind != HandleKind::Link) return {value, value, true};
    std::lock_guard lock(mutex_);
    Link l;
    if (!find(value, /*stoppedToo=*/true, l)) return {nullptr, nullptr, false};
    return {l.ours, l.theirs, true};
}

void* ChainedComm::startTheirs(uint64_t type, void* descr) {
    if (!initOk_ || !(type & static_cast<uint64_t>(mask_))) return nullptr;
    void* handle = nullptr;
    callTheirs([&] {
        if (abi_ == Abi::V5)
            plugin_->v5.startEvent(context_, &handle, static_cast<ncclProfilerEventDescr_v5_t*>(descr));
        else
            plugin_->v4.startEvent(context_, &handle, static_cast<ncclProfilerEventDescr_v4_t*>(descr));
    });
    return handle;
}

void* ChainedComm::link(void* ours, void* theirs, uint64_t type) {
    if (!ours && !theirs) return nullptr;
    std::lock_guard lock(mutex_);
    if (nextId_ > kMaxHandleId) nextId_ = 1;
    while (links_.count(nextId_)) ++nextId_;
    const uint64_t id = nextId_++;
    links_.emplace(id, Link{ours, theirs, type, false});
    return makeHandle(HandleKind::Link, serial_, id);
}

void* ChainedComm::stop(void* link) {
    Link l;
    {
        std::lock_guard lock(mutex_);
        const uint64_t id = find(link, /*stoppedToo=*/false, l);
        if (!id) return nullptr;
        if (namedAsParent(l.type)) {
            links_.at(id).stopped = true;
            stoppedParents_.push_back(id);
            if (stoppedParents_.size() > kMaxStoppedParents) {
                links_.erase(stoppedParents_.front());
                stoppedParents_.pop_front();
            }
        } else {
            links_.erase(id);
        }
    }
    if (l.theirs)
        callTheirs([&] { abi_ == Abi::V5 ? plugin_->v5.stopEvent(l.theirs) : plugin_->v4.stopEvent(l.theirs); });
    return l.ours;
}

void* ChainedComm::record(void* link, int eState, ncclProfilerEventStateArgs_v5_t* args) {
    Link l;
    {
        std::lock_guard lock(mutex_);
        if (!find(link, /*stoppedToo=*/false, l)) return nullptr;
    }
    if (l.theirs)
        callTheirs([&] {
            if (abi_ == Abi::V5)
                plugin_->v5.recordEventState(l.theirs, eState, args);
            else
                plugin_->v4.recordEventState(l.theirs, eState, args);
        });
    return l.ours;
}

void ChainedComm::finalize() {
    {
        std::lock_guard lock(mutex_);
        if (finalized_) return;
        finalized_ = true;
        links_.clear();
        stoppedParents_.clear();
    }
    {
        // Waits for calls in flight; none starts after this.
        std::unique_lock lock(callMutex_);
        if (theirsFinalized_) return;
        theirsFinalized_ = true;
    }
    if (initOk_) abi_ == Abi::V5 ? plugin_->v5.finalize(context_) : plugin_->v4.finalize(context_);
}

}  // namespace osc::agent::nccl

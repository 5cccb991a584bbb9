#include "agent/core/awaited_launches.h"

#include <algorithm>
#include <array>

namespace osc::agent {
namespace {

bool endsWith(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// "cudaLaunchKernel_ptsz_v7000" -> "cudaLaunchKernel": CUPTI names carry the
// API version and the per-thread default stream variant, in either order.
std::string_view baseName(std::string_view name) {
    for (;;) {
        if (endsWith(name, "_ptsz") || endsWith(name, "_ptds")) {
            name.remove_suffix(5);
            continue;
        }
        const size_t v = name.rfind("_v");
        if (v == std::string_view::npos || v + 2 == name.size()) return name;
        const std::string_view digits = name.substr(v + 2);
        if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return name;
        name = name.substr(0, v);
    }
}

constexpr std::array<std::string_view, 7> kKernelLaunches = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cudaLaunch",
    "cuLaunchKernel",   "cuLaunchKernelEx",    "cuLaunchCooperativeKernel",
};

// cudaMemcpyAsync, cudaMemcpy2DAsync, cudaMemsetAsync, cuMemcpyHtoDAsync,
// cuMemsetD32Async...; not cudaMemPrefetchAsync or cuMemAllocAsync.
bool isAsyncCopyOrMemset(std::string_view base) {
    if (!endsWith(base, "Async")) return false;
    for (std::string_view prefix : {"cudaMem", "cuMem"}) {
        if (base.substr(0, prefix.size()) != prefix) continue;
        const std::string_view rest = base.substr(prefix.size());
        return rest.substr(0, 3) == "cpy" || rest.substr(0, 3) == "set";
    }
    return false;
}

}  // namespace

ApiCallRole apiCallRole(std::string_view name) {
    const std::string_view base = baseName(name);
    if (base == "cudaGraphLaunch" || base == "cuGraphLaunch") return ApiCallRole::GraphLaunch;
    if (base == "cudaStreamBeginCapture" || base == "cuStreamBeginCapture" ||
        base == "cudaStreamBeginCaptureToGraph" || base == "cuStreamBeginCaptureToGraph")
        return ApiCallRole::BeginStreamCapture;
    if (base == "cudaStreamEndCapture" || base == "cuStreamEndCapture") return ApiCallRole::EndStreamCapture;
    if (std::find(kKernelLaunches.begin(), kKernelLaunches.end(), base) != kKernelLaunches.end() ||
        isAsyncCopyOrMemset(base))
        return ApiCallRole::Launch;
    return ApiCallRole::Other;
}

AwaitedLaunches::AwaitedLaunches(size_t window) {
    size_t size = 1;
    while (size < window) size <<= 1;
    states_.assign(size, Unseen);
}

ApiCallRole AwaitedLaunches::roleOf(std::string_view name) {
    if (name.empty()) return ApiCallRole::Other;
    auto it = roles_.find(name.data());
    if (it != roles_.end() && it->second.text == name) return it->second.role;
    if (roles_.size() >= 4096) roles_.clear();  // names from short-lived storage: start again
    const ApiCallRole role = apiCallRole(name);
    roles_[name.data()] = KnownName{std::string(name), role};
    return role;
}

bool AwaitedLaunches::capturing(uint64_t globalTid) const {
    return std::find(capturingThreads_.begin(), capturingThreads_.end(), globalTid) != capturingThreads_.end();
}

void AwaitedLaunches::apiCall(const ApiCallRow& row) {
    const ApiCallRole role = roleOf(row.name);
    if (role == ApiCallRole::Other || row.returnValue != 0) return;
    switch (role) {
        case ApiCallRole::BeginStreamCapture:
            if (!capturing(row.globalTid)) capturingThreads_.push_back(row.globalTid);
            return;
        case ApiCallRole::EndStreamCapture:
            std::erase(capturingThreads_, row.globalTid);
            return;
        case ApiCallRole::Launch:
            if (!capturingThreads_.empty() && capturing(row.globalTid)) return;
            break;
        default: break;
    }
    mark(row.correlationId, Launched);
}

void AwaitedLaunches::gpuRecord(uint32_t correlationId) { mark(correlationId, Ran); }

void AwaitedLaunches::mark(uint32_t correlationId, State to) {
    const uint64_t id = correlationId;
    const uint64_t mask = states_.size() - 1;
    if (!any_) {
        newest_ = id;
        any_ = true;
    } else if (id > newest_) {
        // The slots the window moves onto held ids that are now too old.
        const uint64_t moved = std::min<uint64_t>(id - newest_, states_.size());
        for (uint64_t i = 1; i <= moved; ++i) {
            uint8_t& old = states_[(newest_ + i) & mask];
            if (old == Launched) --count_;
            old = Unseen;
        }
        newest_ = id;
    } else if (newest_ - id >= states_.size()) {
        return;  // older than the window
    }
    uint8_t& state = states_[id & mask];
    if (to == Launched) {
        if (state == Unseen) {
            state = Launched;
            ++count_;
        }
    } else {
        if (state == Launched) --count_;
        state = Ran;
    }
    published_.store(count_, std::memory_order_relaxed);
}

}  // namespace osc::agent

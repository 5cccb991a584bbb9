#include "agent/core/awaited_launches.h"

#include <algorithm>

namespace osc::agent {

AwaitedLaunches::AwaitedLaunches(size_t window) {
    size_t size = 1;
    while (size < window) size <<= 1;
    states_.assign(size, Unseen);
}

ApiCallRole AwaitedLaunches::roleOf(std::string_view name) {
    if (name.empty()) return ApiCallRole::Other;
    // A job calls a handful of functions, each thousands of times in a row:
    // the last one's answer first, without hashing.
    if (last_ && name.data() == lastKey_ && last_->text == name) return last_->role;
    auto it = roles_.find(name.data());
    if (it == roles_.end() || it->second.text != name) {
        if (roles_.size() >= 4096) roles_.clear();  // names from short-lived storage: start again
        it = roles_.insert_or_assign(name.data(), KnownName{std::string(name), apiCallRole(name)}).first;
    }
    lastKey_ = name.data();
    last_ = &it->second;
    return it->second.role;
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
        case ApiCallRole::KernelLaunch:
        case ApiCallRole::AsyncCopyOrMemset:
            if (!capturingThreads_.empty() && capturing(row.globalTid)) return;
            break;
        default:
            break;
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

// Which launches recorded in a capture still wait for their GPU record: what
// a capture stopped by request waits for before it closes (the stop grace,
// capture_session.h). A launch's API record is written when the call returns;
// its kernel, copy or memset record only once the GPU has run it, which can
// be milliseconds later (a training step queues work ahead of the GPU).
#pragma once

#include "analyzer/capture/api_call_names.h"
#include "analyzer/capture/capture_writer.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace osc::agent {

// A launch is a kernel launch, a graph launch or an asynchronous copy or
// memset (api_call_names.h); a synchronous copy has finished when its call
// returns. Fed the rows as they are decoded, on the writer thread; count() may be read
// from any thread. Keyed by correlation id in a window of the most recent
// `window` ids (a power of two), so launches whose GPU record never comes
// (dropped, or captured into a graph before the capture began) are forgotten
// as newer calls arrive instead of piling up.
class AwaitedLaunches {
public:
    explicit AwaitedLaunches(size_t window = size_t{1} << 18);

    void apiCall(const ApiCallRow& row);
    // A kernel, copy or memset record. It may come before its launch's record.
    void gpuRecord(uint32_t correlationId);
    // Launches recorded whose GPU record has not come.
    uint64_t count() const { return published_.load(std::memory_order_relaxed); }

private:
    enum State : uint8_t { Unseen, Launched, Ran };
    void mark(uint32_t correlationId, State to);
    ApiCallRole roleOf(std::string_view name);
    bool capturing(uint64_t globalTid) const;

    std::vector<uint8_t> states_;  // by correlation id modulo the window
    uint64_t newest_ = 0;          // the highest correlation id seen
    bool any_ = false;
    uint64_t count_ = 0;
    std::atomic<uint64_t> published_{0};
    // Threads between cudaStreamBeginCapture and cudaStreamEndCapture: their
    // launches become graph nodes and never run under their own id.
    std::vector<uint64_t> capturingThreads_;
    // Decoders hand the same name storage for every call of one function:
    // keyed by its address, confirmed by its text.
    struct KnownName {
        std::string text;
        ApiCallRole role;
    };
    std::unordered_map<const char*, KnownName> roles_;
    const char* lastKey_ = nullptr;
    const KnownName* last_ = nullptr;  // roles_[lastKey_] (map nodes stay put)
};

}  // namespace osc::agent

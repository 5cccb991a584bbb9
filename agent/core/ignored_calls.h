// What the agent refused to trust: calls from NCCL or CUPTI naming a handle,
// context or buffer it did not give out, or no longer holds. Each is counted
// by reason and otherwise ignored, so a library that hands back something
// stale costs a row at worst, never the job (docs/agent.md, "What the agent
// trusts"). The counts are process totals; a capture writes the ones that
// grew while it ran into its OVERLAPSCOPE_META (`ignored_<reason>`), the
// live endpoint serves them as overlapscope_agent_ignored_calls_total.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace osc::agent {

enum class IgnoredReason : unsigned {
    NcclNullHandle,       // a stop or state call with a null handle
    NcclForeignHandle,    // not a handle of ours, or another communicator's
    NcclUnknownHandle,    // in our format, but never given out
    NcclStaleHandle,      // given out, but its event has ended (stopped before, or written)
    NcclStoppedTwice,     // an operation stopped a second time
    NcclFinalizedHandle,  // its communicator was finalized (contexts finalized twice too)
    NcclUnknownContext,   // a start or finalize with a context we never gave out
    NcclOrphanChannel,    // a channel started that never stopped, dropped when its operation was written
    BufferForeign,        // a buffer handed back that the pool has not lent (or twice)
    BufferAfterStop,      // a buffer handed back after its capture ended: back to the pool
    SourceStopGaveUp,     // the source did not stop within the exit bound
    Count
};

inline constexpr size_t kIgnoredReasons = static_cast<size_t>(IgnoredReason::Count);

// The reason as it appears in the meta key and the metric's label.
constexpr std::string_view ignoredReasonName(IgnoredReason r) {
    constexpr std::array<std::string_view, kIgnoredReasons> names = {
        "nccl_null_handle",   "nccl_foreign_handle",   "nccl_unknown_handle",  "nccl_stale_handle",
        "nccl_stopped_twice", "nccl_finalized_handle", "nccl_unknown_context", "nccl_orphan_channel",
        "buffer_foreign",     "buffer_after_stop",     "source_stop_gave_up",
    };
    return names[static_cast<size_t>(r)];
}

struct IgnoredCalls {
    std::array<uint64_t, kIgnoredReasons> counts{};

    uint64_t operator[](IgnoredReason r) const { return counts[static_cast<size_t>(r)]; }
    uint64_t& operator[](IgnoredReason r) { return counts[static_cast<size_t>(r)]; }
    uint64_t total() const {
        uint64_t sum = 0;
        for (uint64_t c : counts) sum += c;
        return sum;
    }
    IgnoredCalls& operator+=(const IgnoredCalls& o) {
        for (size_t i = 0; i < kIgnoredReasons; ++i) counts[i] += o.counts[i];
        return *this;
    }
    // What grew since `earlier` (counts only grow).
    IgnoredCalls since(const IgnoredCalls& earlier) const {
        IgnoredCalls d;
        for (size_t i = 0; i < kIgnoredReasons; ++i)
            d.counts[i] = counts[i] >= earlier.counts[i] ? counts[i] - earlier.counts[i] : counts[i];
        return d;
    }
    bool operator==(const IgnoredCalls&) const = default;
};

// IgnoredCalls counted from any thread.
class IgnoredCounter {
public:
    void add(IgnoredReason r, uint64_t n = 1) {
        counts_[static_cast<size_t>(r)].fetch_add(n, std::memory_order_relaxed);
    }
    IgnoredCalls snapshot() const {
        IgnoredCalls c;
        for (size_t i = 0; i < kIgnoredReasons; ++i) c.counts[i] = counts_[i].load(std::memory_order_relaxed);
        return c;
    }

private:
    std::array<std::atomic<uint64_t>, kIgnoredReasons> counts_{};
};

}  // namespace osc::agent

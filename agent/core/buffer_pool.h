// A byte-bounded pool of activity buffers plus the queue of completed ones.
// The bound is the agent's whole memory budget for in-flight records: when
// the writer falls behind, requests fail (and the source drops and counts
// records) instead of the application blocking or memory growing.
//
// The pool is also what a source hands buffers to (a BufferSink that lives
// as long as the agent), and it checks every buffer handed back against
// what it lent: a buffer it never lent, or one handed back twice, is counted
// and ignored, never written or reused; a size beyond the buffer is cut to
// it. A buffer handed back while no capture takes them (CUPTI's last ones
// after a stop) goes straight back to the pool.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/ignored_calls.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace osc::agent {

struct CompletedBuffer {
    uint8_t* data = nullptr;
    size_t validBytes = 0;
};

class BufferPool final : public BufferSink {
public:
    // `boundBytes` total; buffers are `bufferBytes` each (at least one buffer).
    BufferPool(size_t boundBytes, size_t bufferBytes);
    ~BufferPool() override;
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    size_t bufferBytes() const { return bufferBytes_; }
    size_t capacityBuffers() const { return maxBuffers_; }

    // An empty, zeroed buffer, or nullptr when all buffers are in use.
    uint8_t* acquire();
    // Returns a buffer lent by acquire() (or popped from the completed
    // queue); it is zeroed here, off the app thread. Anything else is counted.
    void release(uint8_t* buffer);

    // A lent buffer, filled: queued for the writer (or, with the intake
    // closed, straight back to the pool).
    void pushCompleted(uint8_t* buffer, size_t validBytes);
    // Waits until a completed buffer is queued or `deadline` passes.
    bool popCompleted(CompletedBuffer& out, std::chrono::steady_clock::time_point deadline);
    bool tryPopCompleted(CompletedBuffer& out);
    size_t completedCount() const;
    // Buffers queued so far, ever: whoever waits for a flush's buffers counts these.
    uint64_t completedTotal() const;
    // Wakes a waiting popCompleted (shutdown).
    void wake();

    // A capture takes completed buffers from now on; whatever an earlier one
    // left in the queue goes back to the pool first.
    void openIntake();
    // No capture takes them any more: the queue and every later completion
    // go back to the pool (counted as BufferAfterStop).
    void closeIntake();

    uint8_t* requestBuffer(size_t* size) override;
    void bufferCompleted(uint8_t* buffer, size_t validBytes) override;

    uint64_t refusedRequests() const;
    size_t buffersInUse() const;
    IgnoredCalls ignored() const { return ignored_.snapshot(); }

private:
    enum class State { Free, Lent, Queued, Held, Zeroing };
    struct Slot {
        State state = State::Free;
        size_t written = 0;  // the bytes from the start that may not be zero
    };
    static constexpr size_t kRecordSlackBytes = 16u << 10;
    // Caller holds mutex_; unlocks it to zero the buffer.
    void releaseLocked(std::unique_lock<std::mutex>& lock, uint8_t* buffer);
    void releaseQueuedLocked(std::unique_lock<std::mutex>& lock);

    const size_t bufferBytes_;
    const size_t maxBuffers_;
    mutable std::mutex mutex_;
    std::condition_variable completedCv_;
    std::vector<std::unique_ptr<uint8_t[]>> owned_;
    std::unordered_map<const uint8_t*, Slot> states_;  // every buffer owned_ holds
    std::vector<uint8_t*> free_;
    std::deque<CompletedBuffer> completed_;
    size_t inUse_ = 0;
    uint64_t refused_ = 0, completedTotal_ = 0;
    bool woken_ = false;
    bool intakeOpen_ = true;
    IgnoredCounter ignored_;
};

}  // namespace osc::agent

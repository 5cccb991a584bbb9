// A byte-bounded pool of activity buffers plus the queue of completed ones.
// The bound is the agent's whole memory budget for in-flight records: when
// the writer falls behind, requests fail (and the source drops and counts
// records) instead of the application blocking or memory growing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace osc::agent {

struct CompletedBuffer {
    uint8_t* data = nullptr;
    size_t validBytes = 0;
};

class BufferPool {
public:
    // `boundBytes` total; buffers are `bufferBytes` each (at least one buffer).
    BufferPool(size_t boundBytes, size_t bufferBytes);
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    size_t bufferBytes() const { return bufferBytes_; }
    size_t capacityBuffers() const { return maxBuffers_; }

    // An empty, zeroed buffer, or nullptr when all buffers are in use.
    uint8_t* acquire();
    // Returns a buffer taken with acquire(); it is zeroed here, off the app thread.
    void release(uint8_t* buffer);

    // Completed buffers, oldest first.
    void pushCompleted(uint8_t* buffer, size_t validBytes);
    // Waits until a completed buffer is queued or `deadline` passes.
    bool popCompleted(CompletedBuffer& out, std::chrono::steady_clock::time_point deadline);
    bool tryPopCompleted(CompletedBuffer& out);
    size_t completedCount() const;
    // Wakes a waiting popCompleted (shutdown).
    void wake();

    uint64_t refusedRequests() const;
    size_t buffersInUse() const;

private:
    const size_t bufferBytes_;
    const size_t maxBuffers_;
    mutable std::mutex mutex_;
    std::condition_variable completedCv_;
    std::vector<std::unique_ptr<uint8_t[]>> owned_;
    std::vector<uint8_t*> free_;
    std::deque<CompletedBuffer> completed_;
    size_t inUse_ = 0;
    uint64_t refused_ = 0;
    bool woken_ = false;
};

}  // namespace osc::agent

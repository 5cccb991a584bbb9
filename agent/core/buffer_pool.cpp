#include "agent/core/buffer_pool.h"

#include <algorithm>
#include <cstring>

namespace osc::agent {

BufferPool::BufferPool(size_t boundBytes, size_t bufferBytes)
    : bufferBytes_(std::max<size_t>(bufferBytes, 1024)),
      maxBuffers_(std::max<size_t>(1, boundBytes / std::max<size_t>(bufferBytes, 1024))) {}

BufferPool::~BufferPool() = default;

uint8_t* BufferPool::acquire() {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
        uint8_t* b = free_.back();
        free_.pop_back();
        ++inUse_;
        return b;
    }
    if (owned_.size() >= maxBuffers_) {
        ++refused_;
        return nullptr;
    }
    // CUPTI wants 8-byte aligned buffers; new[] of a large array is 16-aligned.
    owned_.emplace_back(new (std::nothrow) uint8_t[bufferBytes_]());
    if (!owned_.back()) {
        owned_.pop_back();
        ++refused_;
        return nullptr;
    }
    ++inUse_;
    return owned_.back().get();
}

void BufferPool::release(uint8_t* buffer) {
    if (!buffer) return;
    std::memset(buffer, 0, bufferBytes_);
    std::lock_guard lock(mutex_);
    free_.push_back(buffer);
    if (inUse_ > 0) --inUse_;
}

void BufferPool::pushCompleted(uint8_t* buffer, size_t validBytes) {
    {
        std::lock_guard lock(mutex_);
        completed_.push_back({buffer, validBytes});
    }
    completedCv_.notify_one();
}

bool BufferPool::popCompleted(CompletedBuffer& out, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    completedCv_.wait_until(lock, deadline, [&] { return !completed_.empty() || woken_; });
    woken_ = false;
    if (completed_.empty()) return false;
    out = completed_.front();
    completed_.pop_front();
    return true;
}

bool BufferPool::tryPopCompleted(CompletedBuffer& out) {
    std::lock_guard lock(mutex_);
    if (completed_.empty()) return false;
    out = completed_.front();
    completed_.pop_front();
    return true;
}

size_t BufferPool::completedCount() const {
    std::lock_guard lock(mutex_);
    return completed_.size();
}

void BufferPool::wake() {
    {
        std::lock_guard lock(mutex_);
        woken_ = true;
    }
    completedCv_.notify_all();
}

uint64_t BufferPool::refusedRequests() const {
    std::lock_guard lock(mutex_);
    return refused_;
}

size_t BufferPool::buffersInUse() const {
    std::lock_guard lock(mutex_);
    return inUse_;
}

}  // namespace osc::agent

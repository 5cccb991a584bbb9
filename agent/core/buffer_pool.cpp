#include "agent/core/buffer_pool.h"

#include <algorithm>
#include <cstring>

namespace osc::agent {

BufferPool::BufferPool(size_t boundBytes, size_t bufferBytes)
    : bufferBytes_(std::max<size_t>(bufferBytes, 1024)),
      maxBuffers_(std::max<size_t>(1, boundBytes / std::max<size_t>(bufferBytes, 1024))) {
    // Giving a buffer back never allocates.
    free_.reserve(maxBuffers_);
    states_.reserve(maxBuffers_);
}

BufferPool::~BufferPool() = default;

uint8_t* BufferPool::acquire() {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
        uint8_t* b = free_.back();
        free_.pop_back();
        states_[b] = {State::Lent, bufferBytes_};
        ++inUse_;
        return b;
    }
    if (owned_.size() >= maxBuffers_) {
        ++refused_;
        return nullptr;
    }
    // CUPTI wants 8-byte aligned buffers; new[] of a large array is 16-aligned.
    std::unique_ptr<uint8_t[]> fresh(new (std::nothrow) uint8_t[bufferBytes_]());
    if (!fresh) {
        ++refused_;
        return nullptr;
    }
    try {
        states_.emplace(fresh.get(), Slot{State::Lent, bufferBytes_});
        owned_.push_back(std::move(fresh));
    } catch (const std::bad_alloc&) {
        if (fresh) states_.erase(fresh.get());
        ++refused_;
        return nullptr;
    }
    ++inUse_;
    return owned_.back().get();
}

void BufferPool::release(uint8_t* buffer) {
    std::unique_lock lock(mutex_);
    releaseLocked(lock, buffer);
}

void BufferPool::releaseLocked(std::unique_lock<std::mutex>& lock, uint8_t* buffer) {
    const auto it = states_.find(buffer);
    if (it == states_.end() || (it->second.state != State::Lent && it->second.state != State::Held)) {
        ignored_.add(IgnoredReason::BufferForeign);
        return;
    }
    it->second.state = State::Zeroing;  // nobody else may touch it meanwhile
    const size_t written = it->second.written;
    lock.unlock();
    // We tell CUPTI that its buffers come zeroed
    // (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER), and it relies on that
    // for the fields of a record it does not fill: every byte it may have
    // written is zeroed again (`written`, pushCompleted()).
    std::memset(buffer, 0, written);
    lock.lock();
    states_[buffer] = {State::Free, 0};
    free_.push_back(buffer);
    if (inUse_ > 0) --inUse_;
}

void BufferPool::pushCompleted(uint8_t* buffer, size_t validBytes) {
    {
        std::unique_lock lock(mutex_);
        const auto it = states_.find(buffer);
        if (it == states_.end() || it->second.state != State::Lent) {
            ignored_.add(IgnoredReason::BufferForeign);
            return;
        }
        // CUPTI writes records one after the other from the buffer's start;
        // past validBytes it may have begun a record and left it out (the
        // buffer was full). The bytes it may have touched end within one
        // record of validBytes; kRecordSlackBytes is many times the largest
        // record (208 bytes, a kernel's, in CUDA 13). Zeroing those instead
        // of the whole buffer (4 MiB, mostly untouched when a flush hands it
        // over) was 10 % of the writer thread at 40,000 records/s.
        it->second.written = validBytes < bufferBytes_ - std::min(bufferBytes_, kRecordSlackBytes)
                                 ? validBytes + kRecordSlackBytes
                                 : bufferBytes_;
        if (!intakeOpen_) {
            ignored_.add(IgnoredReason::BufferAfterStop);
            releaseLocked(lock, buffer);
            return;
        }
        if (validBytes > bufferBytes_) {
            // More records than the buffer holds: read no further than it.
            ignored_.add(IgnoredReason::BufferForeign);
            validBytes = bufferBytes_;
        }
        it->second.state = State::Queued;
        completed_.push_back({buffer, validBytes});
        ++completedTotal_;
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
    states_[out.data].state = State::Held;
    return true;
}

bool BufferPool::tryPopCompleted(CompletedBuffer& out) {
    std::lock_guard lock(mutex_);
    if (completed_.empty()) return false;
    out = completed_.front();
    completed_.pop_front();
    states_[out.data].state = State::Held;
    return true;
}

size_t BufferPool::completedCount() const {
    std::lock_guard lock(mutex_);
    return completed_.size();
}

uint64_t BufferPool::completedTotal() const {
    std::lock_guard lock(mutex_);
    return completedTotal_;
}

void BufferPool::wake() {
    {
        std::lock_guard lock(mutex_);
        woken_ = true;
    }
    completedCv_.notify_all();
}

void BufferPool::releaseQueuedLocked(std::unique_lock<std::mutex>& lock) {
    while (!completed_.empty()) {
        uint8_t* b = completed_.front().data;
        completed_.pop_front();
        states_[b].state = State::Held;
        releaseLocked(lock, b);
    }
}

void BufferPool::openIntake() {
    std::unique_lock lock(mutex_);
    releaseQueuedLocked(lock);
    intakeOpen_ = true;
}

void BufferPool::closeIntake() {
    std::unique_lock lock(mutex_);
    intakeOpen_ = false;
    const size_t left = completed_.size();
    releaseQueuedLocked(lock);
    ignored_.add(IgnoredReason::BufferAfterStop, left);
}

uint8_t* BufferPool::requestBuffer(size_t* size) {
    *size = bufferBytes_;
    return acquire();
}

void BufferPool::bufferCompleted(uint8_t* buffer, size_t validBytes) { pushCompleted(buffer, validBytes); }

uint64_t BufferPool::refusedRequests() const {
    std::lock_guard lock(mutex_);
    return refused_;
}

size_t BufferPool::buffersInUse() const {
    std::lock_guard lock(mutex_);
    return inUse_;
}

}  // namespace osc::agent

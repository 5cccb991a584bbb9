// A trace file's content (plain, or inflated from gzip) as one contiguous
// span of address space, filled by a thread of its own a bounded distance
// ahead of its readers and given back to the system behind them. Readers on
// several threads parse any part in flight in place, without copies, while
// memory holds only that part: the span is reserved, not allocated, and only
// the pages between the release point and the fill point are resident.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace osc {

class InflateStream;

class TraceBytes {
public:
    // Zero bytes readable after the content: room for the readers' word-wide loads.
    static constexpr size_t kPadding = 64;

    // Reads `path` on a thread of its own, `ahead` bytes beyond the release
    // point (further where a reader waits for more). Throws CaptureError when the file cannot be opened.
    TraceBytes(const std::string& path, size_t ahead);
    // Content already in memory (tests, fuzzers): copied once into the span.
    TraceBytes(const char* data, size_t size);
    ~TraceBytes();
    TraceBytes(const TraceBytes&) = delete;
    TraceBytes& operator=(const TraceBytes&) = delete;

    const char* data() const { return base_; }
    // Blocks until at least `offset` bytes are filled or the content has
    // ended; returns the bytes filled so far. At the end it rethrows the
    // reader's error (CaptureError), if any; a content larger than the span
    // throws TooLarge.
    size_t waitFor(size_t offset);
    // The bytes filled so far, without waiting.
    size_t filled() const;
    // Whether everything is filled (waitFor returned the content's size).
    bool ended() const;
    // Nothing before `offset` is read again: its memory goes back.
    void release(size_t offset);

    uint64_t fileBytesRead() const;
    uint64_t fileSize() const;

    struct TooLarge {};

private:
    void fill();
    void reserve(size_t bytes);

    std::unique_ptr<InflateStream> stream_;
    char* base_ = nullptr;
    size_t capacity_ = 0;  // reserved bytes, padding included
    size_t ahead_ = 0;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    size_t filled_ = 0, released_ = 0, demanded_ = 0;
    size_t pagesReleased_ = 0;  // below it, the pages went back
    bool ended_ = false, tooLarge_ = false, stopping_ = false;
    std::string error_;
    std::thread thread_;
};

}  // namespace osc

// A trace file's content (plain, or inflated from gzip), filled by a thread of
// its own a bounded distance ahead of its readers, who parse it in place on
// several threads, without copies. The bytes live in a ring mapped twice in a
// row, so any stretch of up to span() bytes from an offset not yet released
// reads as one contiguous run, and memory stays at the ring's size however
// large the file: the same pages are filled again once the readers have
// released them (no page faults, nothing to zero, after the first lap). A
// thread's next file reuses the ring its last one let go of.
#pragma once

#include <atomic>
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
    // Reads `path` on a thread of its own into a ring of at least `span`
    // bytes. Throws CaptureError when the file cannot be opened.
    TraceBytes(const std::string& path, size_t span);
    // Content already in memory (tests, fuzzers): copied once, whole.
    TraceBytes(const char* data, size_t size);
    ~TraceBytes();
    TraceBytes(const TraceBytes&) = delete;
    TraceBytes& operator=(const TraceBytes&) = delete;

    // Where content byte `offset` is: valid while `offset` is not released,
    // and readable contiguously up to `span()` bytes on from there (as far as
    // filled).
    const char* at(size_t offset) const { return base_ + (offset & mask_); }
    size_t span() const { return span_; }

    // Blocks until at least `offset` bytes are filled or the content has
    // ended; returns the bytes filled so far. At the end it rethrows the
    // reader's error (CaptureError), if any. The ring holds at most span()
    // bytes beyond the release point: a reader waiting for more must be one
    // that some other reader's release will serve (json_in_place::Cursor
    // never asks beyond span() from where it was placed).
    // `giveUp`, where given, ends the wait early once set (see wake()).
    size_t waitFor(size_t offset, const std::atomic<bool>* giveUp = nullptr);
    // Wakes every waiter, so that one whose giveUp is set returns.
    void wake();
    // The bytes filled so far, without waiting.
    size_t filled() const;
    // Nothing before `offset` is read again: the ring may be filled over it.
    void release(size_t offset);

    uint64_t fileBytesRead() const;
    uint64_t fileSize() const;
    // About how much of the content lies before content byte `offset`, as a
    // fraction: exactly for plain files and content in memory; for gzip,
    // the compressed bytes read so far over the file's.
    double fractionBefore(size_t offset) const;

private:
    void fill();

    std::unique_ptr<InflateStream> stream_;
    char* base_ = nullptr;
    size_t mapped_ = 0;         // bytes mapped at base_
    bool ring_ = false;         // base_ is a ring (mapped twice), kept for the thread's next file
    size_t span_ = 0;           // the ring's size (or the whole content's)
    size_t mask_ = ~size_t{0};  // offset -> place in the ring
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    size_t filled_ = 0, released_ = 0, demanded_ = 0;
    bool ended_ = false, stopping_ = false;
    std::string error_;
    std::thread thread_;
};

}  // namespace osc

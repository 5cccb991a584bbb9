#include "analyzer/import/trace_bytes.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/import/inflate_stream.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace osc {
namespace {

// What the filling thread reads at a time: small enough that readers waiting
// at the fill point are woken often.
constexpr size_t kStepBytes = size_t{1} << 20;

size_t pageSize() {
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

size_t roundUpToPage(size_t n) { return (n + pageSize() - 1) / pageSize() * pageSize(); }

}  // namespace

void TraceBytes::reserve(size_t bytes) {
    // Address space only: pages become memory when first written, and stop
    // being memory when released.
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<char*>(p);
    capacity_ = bytes;
}

TraceBytes::TraceBytes(const std::string& path, size_t ahead)
    : stream_(std::make_unique<InflateStream>(path)), ahead_(std::max(ahead, kStepBytes)) {
    // A plain file needs its size; inflated content has none known in
    // advance: as much address space as the system grants, within reason.
    const size_t plain = roundUpToPage(static_cast<size_t>(stream_->fileSize()) + kStepBytes + kPadding);
    size_t want = std::max(plain, size_t{1} << 40);
    for (;;) {
        try {
            reserve(want);
            break;
        } catch (const std::bad_alloc&) {
            if (want <= plain) throw;
            want = std::max(plain, want / 2);
        }
    }
    thread_ = std::thread([this] { fill(); });
}

TraceBytes::TraceBytes(const char* data, size_t size) {
    reserve(roundUpToPage(size + kPadding));
    std::memcpy(base_, data, size);
    filled_ = size;
    ended_ = true;
}

TraceBytes::~TraceBytes() {
    if (thread_.joinable()) {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        changed_.notify_all();
        thread_.join();
    }
    if (base_) ::munmap(base_, capacity_);
}

void TraceBytes::fill() {
    std::string error;
    bool tooLarge = false;
    try {
        for (;;) {
            size_t at = 0;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] { return stopping_ || filled_ - released_ < ahead_ || filled_ < demanded_; });
                if (stopping_) return;
                at = filled_;
            }
            const size_t room = std::min(kStepBytes, capacity_ - kPadding - at);
            if (room == 0) {
                // More content than address space: the caller reads the file another way.
                char probe;
                tooLarge = stream_->read(&probe, 1) > 0;
                break;
            }
            const size_t n = stream_->read(base_ + at, room);
            if (n == 0) break;
            {
                std::lock_guard lock(mutex_);
                filled_ = at + n;
            }
            changed_.notify_all();
        }
    } catch (const CaptureError& e) {
        error = e.problem();
    } catch (const std::exception& e) {
        error = e.what();
    }
    {
        std::lock_guard lock(mutex_);
        ended_ = true;
        tooLarge_ = tooLarge;
        error_ = std::move(error);
    }
    changed_.notify_all();
}

size_t TraceBytes::waitFor(size_t offset) {
    std::unique_lock lock(mutex_);
    if (filled_ < offset && !ended_) {
        // Beyond the distance ahead: a reader needs it now (a long event).
        if (offset > demanded_) {
            demanded_ = offset;
            changed_.notify_all();
        }
        changed_.wait(lock, [&] { return filled_ >= offset || ended_; });
    }
    if (filled_ < offset && ended_) {
        if (tooLarge_) throw TooLarge{};
        if (!error_.empty()) throw CaptureError(stream_->path(), error_);
    }
    return filled_;
}

size_t TraceBytes::filled() const {
    std::lock_guard lock(mutex_);
    return filled_;
}

bool TraceBytes::ended() const {
    std::lock_guard lock(mutex_);
    return ended_ && error_.empty() && !tooLarge_;
}

void TraceBytes::release(size_t offset) {
    size_t from = 0, to = 0;
    {
        std::lock_guard lock(mutex_);
        if (offset <= released_) return;
        released_ = std::min(offset, filled_);
        // Whole pages only: the one holding the release point may still be read.
        from = pagesReleased_;
        to = released_ / pageSize() * pageSize();
        pagesReleased_ = std::max(from, to);
    }
    changed_.notify_all();
    if (to > from) ::madvise(base_ + from, to - from, MADV_DONTNEED);
}

uint64_t TraceBytes::fileBytesRead() const { return stream_ ? stream_->fileBytesRead() : filled(); }

uint64_t TraceBytes::fileSize() const { return stream_ ? stream_->fileSize() : filled(); }

}  // namespace osc

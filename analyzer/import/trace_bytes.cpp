#include "analyzer/import/trace_bytes.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/import/inflate_stream.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace osc {
namespace {

// What the filling thread reads at a time: small enough that readers waiting
// at the fill point are woken often.
constexpr size_t kStepBytes = size_t{1} << 20;

size_t pageSize() {
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

// `size` bytes (a power of two, whole pages) of one memory file mapped twice
// in a row: byte i and byte i + size are the same byte.
char* mapRing(size_t size, const std::string& path) {
    const int fd = ::memfd_create("overlapscope-trace", MFD_CLOEXEC);
    if (fd < 0) throw CaptureError(path, std::string("cannot make a read buffer: ") + std::strerror(errno));
    void* area = MAP_FAILED;
    if (::ftruncate(fd, static_cast<off_t>(size)) == 0)
        area = ::mmap(nullptr, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    bool mapped = area != MAP_FAILED;
    char* base = static_cast<char*>(area);
    for (int half = 0; mapped && half < 2; ++half)
        mapped = ::mmap(base + half * size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
    const int error = errno;
    ::close(fd);
    if (!mapped) {
        if (area != MAP_FAILED) ::munmap(area, 2 * size);
        throw CaptureError(path, std::string("cannot map a read buffer: ") + std::strerror(error));
    }
    return base;
}

// The last ring a thread let go of, for its next file: a job that reads
// files one after another on a thread then fills pages already faulted in,
// instead of faulting in and zeroing a fresh ring per file (4 % of the CPU
// of the HTA facade's load of eight files). Unmapped when the thread ends.
struct SpareRing {
    char* base = nullptr;
    size_t size = 0;
    SpareRing() = default;
    SpareRing(const SpareRing&) = delete;
    SpareRing& operator=(const SpareRing&) = delete;
    ~SpareRing() { drop(); }
    void drop() {
        if (base) ::munmap(base, 2 * size);
        base = nullptr;
    }
};
thread_local SpareRing spareRing;

}  // namespace

TraceBytes::TraceBytes(const std::string& path, size_t span) : stream_(std::make_unique<InflateStream>(path)) {
    span_ = 16 * pageSize();
    while (span_ < span) span_ *= 2;
    if (spareRing.base && spareRing.size == span_) {
        base_ = std::exchange(spareRing.base, nullptr);
    } else {
        base_ = mapRing(span_, path);
    }
    ring_ = true;
    mapped_ = 2 * span_;
    mask_ = span_ - 1;
    thread_ = std::thread([this] { fill(); });
}

TraceBytes::TraceBytes(const char* data, size_t size) {
    mapped_ = std::max<size_t>(size, 1);
    void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<char*>(p);
    std::memcpy(base_, data, size);
    span_ = SIZE_MAX / 2;
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
    if (base_ && ring_) {
        spareRing.drop();
        spareRing.base = base_;
        spareRing.size = span_;
    } else if (base_) {
        ::munmap(base_, mapped_);
    }
}

void TraceBytes::fill() {
    std::string error;
    try {
        for (;;) {
            size_t at = 0, room = 0;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] { return stopping_ || filled_ - released_ < span_; });
                if (stopping_) return;
                at = filled_;
                room = std::min(std::min(kStepBytes, span_ / 4), span_ - (filled_ - released_));
            }
            const size_t n = stream_->read(base_ + (at & mask_), room);
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
        error_ = std::move(error);
    }
    changed_.notify_all();
}

size_t TraceBytes::waitFor(size_t offset, const std::atomic<bool>* giveUp) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return filled_ >= offset || ended_ || (giveUp && giveUp->load()); });
    if (filled_ < offset && !error_.empty()) throw CaptureError(stream_->path(), error_);
    return filled_;
}

void TraceBytes::wake() {
    { std::lock_guard lock(mutex_); }  // a waiter between its check and its sleep gets the notice
    changed_.notify_all();
}

size_t TraceBytes::filled() const {
    std::lock_guard lock(mutex_);
    return filled_;
}

void TraceBytes::release(size_t offset) {
    {
        std::lock_guard lock(mutex_);
        if (offset <= released_) return;
        released_ = std::min(offset, filled_);
    }
    changed_.notify_all();
}

uint64_t TraceBytes::fileBytesRead() const { return stream_ ? stream_->fileBytesRead() : filled(); }

uint64_t TraceBytes::fileSize() const { return stream_ ? stream_->fileSize() : filled(); }

double TraceBytes::fractionBefore(size_t offset) const {
    const auto size = static_cast<double>(fileSize());
    if (size <= 0) return 1;
    // A plain file's content is its bytes (offset <= bytes read); a gzip
    // file's content outgrows its bytes, and only the bytes read say.
    return std::min({1.0, static_cast<double>(offset) / size, static_cast<double>(fileBytesRead()) / size});
}

}  // namespace osc

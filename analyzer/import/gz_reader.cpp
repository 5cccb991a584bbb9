#include "analyzer/import/gz_reader.h"

#include "analyzer/capture/capture_error.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace osc {
namespace {

constexpr size_t kChunkBytes = 1 << 20;
// Chunks the inflater may run ahead of the parser: enough to ride out the
// parser's uneven pace, few enough to keep memory at a few MiB.
constexpr size_t kQueuedChunksMax = 4;

bool isGzipMagic(const uint8_t* p, size_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

const char* inflateError(int code) {
    switch (code) {
        case ISAL_INVALID_BLOCK:
            return "invalid deflate block";
        case ISAL_INVALID_SYMBOL:
            return "invalid deflate symbol";
        case ISAL_INVALID_LOOKBACK:
            return "invalid back-reference distance";
        case ISAL_INVALID_WRAPPER:
            return "invalid gzip header";
        case ISAL_UNSUPPORTED_METHOD:
            return "unsupported compression method";
        case ISAL_INCORRECT_CHECKSUM:
            return "checksum mismatch";
        default:
            return "inflate error";
    }
}

}  // namespace

// Runs on its own thread: reads the file, inflates gzip members (several may
// follow each other, as `cat a.gz b.gz` makes them; bytes after the last one
// that do not start another are ignored, as zlib does) or passes plain bytes
// through, and queues the output for read().
class GzReader::Inflater {
public:
    Inflater(int fd, std::string path) : fd_(fd), path_(std::move(path)) {
        thread_ = std::thread([this] { run(); });
    }
    ~Inflater() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        changed_.notify_all();
        thread_.join();
        ::close(fd_);
    }

    // The next chunk, or nullopt at the end; throws the producer's error.
    std::optional<std::vector<char>> next() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !queue_.empty() || finished_; });
        if (!queue_.empty()) {
            auto chunk = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            changed_.notify_all();
            return chunk;
        }
        if (!error_.empty()) throw CaptureError(path_, error_);
        return std::nullopt;
    }

    uint64_t fileBytesRead() const { return fileBytesRead_.load(std::memory_order_relaxed); }

private:
    // False when the reader is being destroyed and the producer should stop.
    bool push(std::vector<char>&& chunk) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return queue_.size() < kQueuedChunksMax || stopping_; });
        if (stopping_) return false;
        queue_.push_back(std::move(chunk));
        lock.unlock();
        changed_.notify_all();
        return true;
    }

    void finish(std::string error) {
        {
            std::lock_guard lock(mutex_);
            finished_ = true;
            error_ = std::move(error);
        }
        changed_.notify_all();
    }

    // Appends up to `room` bytes from the file to `buf` starting at `used`;
    // returns bytes read, 0 at the end. Throws CaptureError on a read error.
    size_t readFile(std::vector<uint8_t>& buf, size_t used) {
        for (;;) {
            const ssize_t n = ::read(fd_, buf.data() + used, buf.size() - used);
            if (n >= 0) {
                fileBytesRead_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
                return static_cast<size_t>(n);
            }
            if (errno != EINTR) throw CaptureError(path_, std::string("read error: ") + std::strerror(errno));
        }
    }

    void run() {
        try {
            std::vector<uint8_t> in(kChunkBytes);
            size_t inLen = readFile(in, 0);
            if (isGzipMagic(in.data(), inLen))
                inflateAll(in, inLen);
            else
                passThrough(in, inLen);
            finish({});
        } catch (const CaptureError& e) {
            finish(e.problem());  // next() throws it again, naming the file, on the parser's thread
        } catch (const std::exception& e) {
            finish(e.what());
        }
    }

    void passThrough(std::vector<uint8_t>& in, size_t inLen) {
        while (inLen > 0) {
            std::vector<char> chunk(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(inLen));
            if (!push(std::move(chunk))) return;
            inLen = readFile(in, 0);
        }
    }

    void inflateAll(std::vector<uint8_t>& in, size_t inLen) {
        inflate_state state;
        isal_inflate_init(&state);
        state.crc_flag = ISAL_GZIP;
        state.next_in = in.data();
        state.avail_in = static_cast<uint32_t>(inLen);
        bool atEof = false;
        std::vector<char> out(kChunkBytes);
        size_t outLen = 0;
        for (;;) {
            if (state.avail_in == 0 && !atEof) {
                const size_t n = readFile(in, 0);
                atEof = n == 0;
                state.next_in = in.data();
                state.avail_in = static_cast<uint32_t>(n);
            }
            state.next_out = reinterpret_cast<uint8_t*>(out.data() + outLen);
            state.avail_out = static_cast<uint32_t>(out.size() - outLen);
            const uint32_t inBefore = state.avail_in, outBefore = state.avail_out;
            const int rc = isal_inflate(&state);
            if (rc < 0) throw CaptureError(path_, std::string("corrupt gzip data: ") + inflateError(rc));
            outLen = out.size() - state.avail_out;
            if (outLen == out.size()) {
                if (!push(std::move(out))) return;
                out.assign(kChunkBytes, 0);
                outLen = 0;
            }
            if (state.block_state == ISAL_BLOCK_FINISH) {
                // Another member may follow; anything else ends the content.
                if (state.avail_in < 2 && !atEof) {
                    // Keep the unread byte (if any) at the front and read on.
                    const size_t kept = state.avail_in;
                    if (kept) in[0] = *state.next_in;
                    const size_t n = readFile(in, kept);
                    atEof = n == 0;
                    state.next_in = in.data();
                    state.avail_in = static_cast<uint32_t>(kept + n);
                }
                if (!isGzipMagic(state.next_in, state.avail_in)) break;
                uint8_t* nextIn = state.next_in;
                const uint32_t availIn = state.avail_in;
                isal_inflate_reset(&state);
                state.crc_flag = ISAL_GZIP;
                state.next_in = nextIn;
                state.avail_in = availIn;
                continue;
            }
            const bool progressed = state.avail_in != inBefore || state.avail_out != outBefore;
            if (atEof && state.avail_in == 0 && !progressed)
                throw CaptureError(path_, "truncated gzip data (file cut short)");
        }
        if (outLen > 0) {
            out.resize(outLen);
            push(std::move(out));
        }
    }

    int fd_;
    std::string path_;
    std::atomic<uint64_t> fileBytesRead_{0};
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::vector<char>> queue_;
    bool finished_ = false, stopping_ = false;
    std::string error_;
    std::thread thread_;  // last: started once everything above exists
};

GzReader::GzReader(const std::string& path) : path_(path) {
    std::error_code ec;
    fileSize_ = std::filesystem::file_size(path, ec);
    if (ec) fileSize_ = 0;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw CaptureError(path, std::string("cannot open for reading: ") + std::strerror(errno));
    inflater_ = std::make_unique<Inflater>(fd, path);
}

GzReader::~GzReader() = default;

size_t GzReader::read(char* into, size_t size) {
    size_t copied = 0;
    while (copied < size) {
        if (pos_ == current_.size()) {
            auto chunk = inflater_->next();
            if (!chunk) break;
            current_ = std::move(*chunk);
            pos_ = 0;
            continue;
        }
        const size_t n = std::min(size - copied, current_.size() - pos_);
        std::memcpy(into + copied, current_.data() + pos_, n);
        pos_ += n;
        copied += n;
    }
    return copied;
}

uint64_t GzReader::fileBytesRead() const { return inflater_->fileBytesRead(); }

}  // namespace osc

#include "analyzer/import/inflate_stream.h"

#include "analyzer/capture/capture_error.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace osc {
namespace {

constexpr size_t kInputBytes = 1 << 20;

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

struct InflateStream::Inflate {
    inflate_state state;
};

InflateStream::InflateStream(const std::string& path) : path_(path) {
    std::error_code ec;
    fileSize_ = std::filesystem::file_size(path, ec);
    if (ec) fileSize_ = 0;
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw CaptureError(path, std::string("cannot open for reading: ") + std::strerror(errno));
}

InflateStream::~InflateStream() {
    if (fd_ >= 0) ::close(fd_);
}

// One read(2), retried on EINTR; 0 at the end of the file.
size_t InflateStream::readFile(uint8_t* into, size_t room) {
    for (;;) {
        const ssize_t n = ::read(fd_, into, room);
        if (n >= 0) {
            fileBytesRead_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
            return static_cast<size_t>(n);
        }
        if (errno != EINTR) throw CaptureError(path_, std::string("read error: ") + std::strerror(errno));
    }
}

size_t InflateStream::read(char* into, size_t room) {
    auto* out = reinterpret_cast<uint8_t*>(into);
    if (mode_ == Mode::Unknown) {
        in_.resize(kInputBytes);
        inLen_ = readFile(in_.data(), in_.size());
        atEof_ = inLen_ == 0;
        if (isGzipMagic(in_.data(), inLen_)) {
            mode_ = Mode::Gzip;
            inflate_ = std::make_unique<Inflate>();
            isal_inflate_init(&inflate_->state);
            inflate_->state.crc_flag = ISAL_GZIP;
            inflate_->state.next_in = in_.data();
            inflate_->state.avail_in = static_cast<uint32_t>(inLen_);
        } else {
            mode_ = Mode::Plain;
        }
    }
    if (mode_ == Mode::Gzip) return inflateInto(out, room);
    if (mode_ == Mode::Ended) return 0;
    // Plain: what the first look read, then straight into the caller's buffer.
    size_t done = 0;
    if (inPos_ < inLen_) {
        done = std::min(room, inLen_ - inPos_);
        std::memcpy(out, in_.data() + inPos_, done);
        inPos_ += done;
        if (inPos_ == inLen_) in_ = {};
    }
    while (done < room && !atEof_) {
        const size_t n = readFile(out + done, room - done);
        atEof_ = n == 0;
        done += n;
    }
    return done;
}

size_t InflateStream::inflateInto(uint8_t* out, size_t room) {
    inflate_state& state = inflate_->state;
    size_t produced = 0;
    while (produced < room && mode_ == Mode::Gzip) {
        if (state.avail_in == 0 && !atEof_) {
            const size_t n = readFile(in_.data(), in_.size());
            atEof_ = n == 0;
            state.next_in = in_.data();
            state.avail_in = static_cast<uint32_t>(n);
        }
        state.next_out = out + produced;
        state.avail_out = static_cast<uint32_t>(std::min<size_t>(room - produced, size_t{1} << 30));
        const uint32_t inBefore = state.avail_in, outBefore = state.avail_out;
        const int rc = isal_inflate(&state);
        if (rc < 0) throw CaptureError(path_, std::string("corrupt gzip data: ") + inflateError(rc));
        produced += outBefore - state.avail_out;
        if (state.block_state == ISAL_BLOCK_FINISH) {
            // Another member may follow; anything else ends the content.
            if (state.avail_in < 2 && !atEof_) {
                // Keep the unread byte (if any) at the front and read on.
                const size_t kept = state.avail_in;
                if (kept) in_[0] = *state.next_in;
                const size_t n = readFile(in_.data() + kept, in_.size() - kept);
                atEof_ = n == 0;
                state.next_in = in_.data();
                state.avail_in = static_cast<uint32_t>(kept + n);
            }
            if (!isGzipMagic(state.next_in, state.avail_in)) {
                mode_ = Mode::Ended;
                break;
            }
            uint8_t* nextIn = state.next_in;
            const uint32_t availIn = state.avail_in;
            isal_inflate_reset(&state);
            state.crc_flag = ISAL_GZIP;
            state.next_in = nextIn;
            state.avail_in = availIn;
            continue;
        }
        const bool progressed = state.avail_in != inBefore || state.avail_out != outBefore;
        if (atEof_ && state.avail_in == 0 && !progressed)
            throw CaptureError(path_, "truncated gzip data (file cut short)");
    }
    return produced;
}

}  // namespace osc

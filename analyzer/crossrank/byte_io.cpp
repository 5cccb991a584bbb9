#include "analyzer/crossrank/byte_io.h"

#include "analyzer/capture/capture_error.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace osc::crossrank {
namespace {

std::string temporaryDirectory() {
    const char* dir = std::getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

}  // namespace

ScratchFile::ScratchFile() {
    const std::string dir = temporaryDirectory();
    fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ < 0) {
        // Filesystems without O_TMPFILE: a private name, removed at once.
        std::string name = dir + "/overlapscope-scratch-XXXXXX";
        fd_ = ::mkostemp(name.data(), O_CLOEXEC);
        if (fd_ >= 0) ::unlink(name.c_str());
    }
    if (fd_ < 0)
        throw CaptureError(dir, std::string("cannot create a scratch file for the merge: ") + std::strerror(errno));
}

ScratchFile::~ScratchFile() {
    if (fd_ >= 0) ::close(fd_);
}

uint64_t ScratchFile::append(const void* data, size_t size) {
    const uint64_t at = size_;
    const auto* p = static_cast<const char*>(data);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pwrite(fd_, p + done, size - done, static_cast<off_t>(size_ + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw CaptureError(temporaryDirectory(), std::string("cannot write the merge's scratch file: ") +
                                                         std::strerror(n < 0 ? errno : ENOSPC));
        done += static_cast<size_t>(n);
    }
    size_ += size;
    return at;
}

void ScratchFile::read(uint64_t offset, void* into, size_t size) const {
    auto* p = static_cast<char*>(into);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd_, p + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw CaptureError(temporaryDirectory(), std::string("cannot read the merge's scratch file: ") +
                                                         (n < 0 ? std::strerror(errno) : "truncated"));
        done += static_cast<size_t>(n);
    }
}

FdRangeBuf::FdRangeBuf(int fd, uint64_t offset, uint64_t length, std::string name)
    : fd_(fd), next_(offset), end_(offset + length), name_(std::move(name)), buffer_(1 << 16) {
    setg(buffer_.data(), buffer_.data(), buffer_.data());
}

FdRangeBuf::int_type FdRangeBuf::underflow() {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (next_ >= end_) return traits_type::eof();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), end_ - next_));
    ssize_t n;
    do n = ::pread(fd_, buffer_.data(), want, static_cast<off_t>(next_));
    while (n < 0 && errno == EINTR);
    if (n < 0) throw CaptureError(name_, std::string("read error: ") + std::strerror(errno));
    if (n == 0) return traits_type::eof();  // the file shrank: the reader reports the truncation
    next_ += static_cast<uint64_t>(n);
    setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
    return traits_type::to_int_type(*gptr());
}

ScratchWriteBuf::ScratchWriteBuf(ScratchFile& file) : file_(file), buffer_(1 << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
}

ScratchWriteBuf::~ScratchWriteBuf() {
    try {
        sync();
    } catch (...) {
        // A destructor must not throw; the writer calls sync() itself to see errors.
    }
}

ScratchWriteBuf::int_type ScratchWriteBuf::overflow(int_type c) {
    sync();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
        *pptr() = traits_type::to_char_type(c);
        pbump(1);
    }
    return traits_type::not_eof(c);
}

int ScratchWriteBuf::sync() {
    const auto n = static_cast<size_t>(pptr() - pbase());
    if (n) file_.append(pbase(), n);
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return 0;
}

}  // namespace osc::crossrank

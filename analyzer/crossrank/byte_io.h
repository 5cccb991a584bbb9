// File plumbing for the cross-rank engine and partial results: a scratch
// file nobody else can see, and stream buffers over a byte range of a file
// descriptor. Analysing a thousand ranks keeps their per-device results on
// disk, not in memory, and reads them back by range.
#pragma once

#include <cstdint>
#include <streambuf>
#include <string>
#include <vector>

namespace osc::crossrank {

// An unnamed file in the temporary directory ($TMPDIR, else /tmp): gone when
// closed, even after a crash. Append-only writes, reads by offset from any
// thread. Throws CaptureError when it cannot be created or written (a full disk).
class ScratchFile {
public:
    ScratchFile();
    ~ScratchFile();
    ScratchFile(const ScratchFile&) = delete;
    ScratchFile& operator=(const ScratchFile&) = delete;

    // Appends and returns the offset the bytes start at. Not thread-safe.
    uint64_t append(const void* data, size_t size);
    uint64_t size() const { return size_; }
    // Reads exactly `size` bytes at `offset`; thread-safe.
    void read(uint64_t offset, void* into, size_t size) const;
    int fd() const { return fd_; }

private:
    int fd_ = -1;
    uint64_t size_ = 0;
};

// Reads bytes [offset, offset + length) of a descriptor through a buffer,
// without moving its file position (pread), so one open file serves many.
class FdRangeBuf : public std::streambuf {
public:
    FdRangeBuf(int fd, uint64_t offset, uint64_t length, std::string name);

protected:
    int_type underflow() override;

private:
    int fd_;
    uint64_t next_, end_;
    std::string name_;
    std::vector<char> buffer_;
};

// Appends through a buffer to a ScratchFile (flushed by sync() and the destructor).
class ScratchWriteBuf : public std::streambuf {
public:
    explicit ScratchWriteBuf(ScratchFile& file);
    ~ScratchWriteBuf() override;

protected:
    int_type overflow(int_type c) override;
    int sync() override;

private:
    ScratchFile& file_;
    std::vector<char> buffer_;
};

}  // namespace osc::crossrank

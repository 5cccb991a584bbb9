// A plain or gzip-compressed file as one stream of content bytes, read on the
// caller's thread: ISA-L's igzip inflates (about 2.8x zlib's speed here);
// several gzip members in a row (`cat a.gz b.gz`) are one stream, bytes after
// the last member that do not start another are ignored, as zlib does. The
// two readers that run it ahead of the parser on a thread of their own are
// GzReader (chunks) and TraceBytes (one contiguous window).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace osc {

class InflateStream {
public:
    // Throws CaptureError when the file cannot be opened.
    explicit InflateStream(const std::string& path);
    ~InflateStream();
    InflateStream(const InflateStream&) = delete;
    InflateStream& operator=(const InflateStream&) = delete;

    // Fills `into` with up to `room` bytes of content (all `room` unless the
    // content ends); 0 at the end. Throws CaptureError on a read error or a
    // gzip stream that is corrupt or cut short.
    size_t read(char* into, size_t room);

    // File bytes (compressed bytes for .gz) consumed so far, safe to read from
    // any thread, and in all: the progress fraction.
    uint64_t fileBytesRead() const { return fileBytesRead_.load(std::memory_order_relaxed); }
    uint64_t fileSize() const { return fileSize_; }
    // Known once the first read() has looked at the file's first bytes.
    bool gzip() const { return mode_ == Mode::Gzip; }
    const std::string& path() const { return path_; }

private:
    enum class Mode : uint8_t { Unknown, Plain, Gzip, Ended };
    struct Inflate;  // ISA-L's state, kept out of this header

    size_t readFile(uint8_t* into, size_t room);
    size_t inflateInto(uint8_t* out, size_t room);

    std::string path_;
    int fd_ = -1;
    uint64_t fileSize_ = 0;
    std::atomic<uint64_t> fileBytesRead_{0};
    Mode mode_ = Mode::Unknown;
    std::vector<uint8_t> in_;  // compressed input, or the first bytes of a plain file
    size_t inPos_ = 0, inLen_ = 0;
    bool atEof_ = false;
    std::unique_ptr<Inflate> inflate_;
};

}  // namespace osc

// Reads a plain or gzip-compressed file in chunks, so a parser streams
// either kind without holding the file. A second thread runs the
// InflateStream (inflate_stream.h) a few chunks ahead of the parser, so on
// two cores decompression costs the parse no wall time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace osc {

class GzReader {
public:
    // Throws CaptureError when the file cannot be opened.
    explicit GzReader(const std::string& path);
    ~GzReader();
    GzReader(const GzReader&) = delete;
    GzReader& operator=(const GzReader&) = delete;

    // Up to `size` bytes of (decompressed) content; 0 at the end. Throws
    // CaptureError on a read error or a gzip stream that is corrupt or cut short.
    size_t read(char* into, size_t size);

    // Bytes of the file (compressed bytes for .gz) consumed so far, and in all:
    // the progress fraction.
    uint64_t fileBytesRead() const;
    uint64_t fileSize() const { return fileSize_; }
    const std::string& path() const { return path_; }

private:
    class Inflater;  // the producer thread and the chunks it hands over
    std::string path_;
    uint64_t fileSize_ = 0;
    std::unique_ptr<Inflater> inflater_;
    std::vector<char> current_;  // the chunk read() is handing out
    size_t pos_ = 0;
};

}  // namespace osc

// Reads a plain or gzip-compressed file in chunks (zlib's gzread reads both),
// so the Kineto parser streams either kind without holding the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace osc {

class GzReader {
public:
    // Throws CaptureError when the file cannot be opened.
    explicit GzReader(const std::string& path);
    ~GzReader();
    GzReader(const GzReader&) = delete;
    GzReader& operator=(const GzReader&) = delete;

    // Up to `size` bytes of (decompressed) content; 0 at the end. Throws
    // CaptureError on a read error or a gzip stream that is cut short.
    size_t read(char* into, size_t size);

    // Bytes of the file (compressed bytes for .gz) consumed so far, and in all:
    // the progress fraction.
    uint64_t fileBytesRead() const;
    uint64_t fileSize() const { return fileSize_; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    void* gz_ = nullptr;  // gzFile, opaque so zlib.h stays out of the header
    uint64_t fileSize_ = 0;
};

}  // namespace osc

#include "analyzer/import/gz_reader.h"

#include "analyzer/capture/capture_error.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <zlib.h>

namespace osc {

GzReader::GzReader(const std::string& path) : path_(path) {
    std::error_code ec;
    fileSize_ = std::filesystem::file_size(path, ec);
    if (ec) fileSize_ = 0;
    errno = 0;
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) {
        throw CaptureError(path, std::string("cannot open for reading: ") +
                                     (errno ? std::strerror(errno) : "out of memory"));
    }
    gzbuffer(f, 256 * 1024);
    gz_ = f;
}

GzReader::~GzReader() {
    if (gz_) gzclose(static_cast<gzFile>(gz_));
}

size_t GzReader::read(char* into, size_t size) {
    auto* f = static_cast<gzFile>(gz_);
    const int got = gzread(f, into, static_cast<unsigned>(std::min<size_t>(size, INT_MAX)));
    int err = Z_OK;
    const char* msg = gzerror(f, &err);
    if (got < 0 || (err != Z_OK && err != Z_BUF_ERROR))
        throw CaptureError(path_, std::string("corrupt gzip data: ") + (msg ? msg : "read error"));
    // zlib signals a gzip stream cut short only by Z_BUF_ERROR at the end.
    if (got == 0 && err == Z_BUF_ERROR) throw CaptureError(path_, "truncated gzip data (file cut short)");
    return static_cast<size_t>(got);
}

uint64_t GzReader::fileBytesRead() const {
    const auto off = gzoffset(static_cast<gzFile>(gz_));
    return off < 0 ? 0 : static_cast<uint64_t>(off);
}

}  // namespace osc

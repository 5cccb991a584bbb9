// The two syntaxes a Flight Recorder dump comes in, read into DataTrees
// (data_tree.h) and handed to a DumpSink as they are read, so that memory
// holds one entry at a time whatever the dump's size:
//  - JSON, as torch._C._distributed_c10d._dump_nccl_trace_json() writes it
//    (analyzer/import/json_scanner.h tokenizes it);
//  - pickles, as PyTorch writes them by default (the watchdog's dump on a
//    timeout, TORCH_NCCL_DEBUG_INFO_TEMP_FILE, _dump_nccl_trace()), or as
//    Python's pickle module writes a dump again, protocols 2 to 5.
// The pickle reader is our own and reads data only: dicts, lists, tuples,
// text, bytes, numbers, booleans and None. An opcode that would import a
// name, call it or build an object (GLOBAL, REDUCE, BUILD, NEWOBJ, ...)
// is refused, naming it: reading a dump never runs anything it holds, as
// Python's own pickle.load would.
// Both throw CaptureError naming the file and the problem, in one line.
#pragma once

#include "analyzer/hang/data_tree.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace osc::hang {

// Anything with `size_t read(char*, size_t)` returning 0 at the end.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual size_t read(char* into, size_t want) = 0;
};

// Limits that keep hostile input from taking unbounded memory or time.
struct DumpLimits {
    // Values of one entry (or one other top-level field), after shared
    // references are expanded.
    uint64_t maxValuesPerEntry = uint64_t{1} << 22;
    // Values of the whole dump: this many per byte read, at least kMinValues.
    uint64_t maxValuesPerByte = 16;
    uint64_t minValues = uint64_t{1} << 24;
};

// `sizeHint`: the input's size where known, so that a small dump does not
// get (and clear) a megabyte of buffer.
void readJsonDump(ByteSource& in, const std::string& path, DumpSink& sink, const DumpLimits& limits = {},
                  uint64_t sizeHint = 0);
void readPickleDump(ByteSource& in, const std::string& path, DumpSink& sink, const DumpLimits& limits = {},
                    uint64_t sizeHint = 0);

// The read buffer for an input of `sizeHint` bytes (0: unknown).
inline size_t readBufferBytes(uint64_t sizeHint) {
    constexpr size_t kMax = size_t{1} << 20, kMin = size_t{1} << 12;
    if (sizeHint == 0 || sizeHint >= kMax) return kMax;
    return std::max<size_t>(kMin, static_cast<size_t>(sizeHint) + 1);
}

// A file, buffered; and bytes in memory (tests, fuzzing).
class FileSource : public ByteSource {
public:
    explicit FileSource(const std::string& path);  // throws CaptureError
    ~FileSource() override;
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;
    size_t read(char* into, size_t want) override;
    uint64_t size() const { return size_; }
    int firstByte() const;  // without reading it; -1 for an empty file

private:
    std::string path_;
    int fd_ = -1;
    uint64_t size_ = 0;
};

class MemorySource : public ByteSource {
public:
    explicit MemorySource(std::string_view bytes, size_t maxChunk = SIZE_MAX) : bytes_(bytes), maxChunk_(maxChunk) {}
    size_t read(char* into, size_t want) override;

private:
    std::string_view bytes_;
    size_t at_ = 0, maxChunk_;
};

}  // namespace osc::hang

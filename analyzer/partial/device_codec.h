// One DeviceAnalysis as compact bytes, for keeping per-device results in a
// scratch file inside one process (`overlapscope report DIR`) instead of as
// report JSON: writing and parsing that JSON was most of the per-file CPU
// time. Exact in both directions: every field, kernelIndex, processIndex,
// Finding::at_ns and exposed_wait_intervals included, doubles bit for bit.
//
// Not a file format: the bytes are read back by the binary that wrote them
// (no versioning beyond a magic number, host byte order). Partials that
// travel between machines stay JSON Lines (partial_format.h).
//
// A member added to DeviceAnalysis or to a struct inside it: list it in
// that struct's visit in device_codec.cpp (the build fails until then).
//
// Layout: a 4-byte magic, the fields in declaration order (numbers fixed
// width, bool and optional tags one byte, strings and vectors a uint32
// count, then their bytes or elements), an 8-byte checksum of everything
// before it. A file part: a uint64 length and the record of the part
// without its devices, a uint64 device count, then per device a uint64
// length and its device record.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/file_part.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace osc::partial {

// Appends the bytes of `device` to `out` (whatever `out` held stays). Throws
// std::length_error for a string or list of 2^32 or more elements.
void encodeDevice(const DeviceAnalysis& device, std::string& out);

// The device whose bytes (exactly one encodeDevice output) are
// data[0, size). Throws CaptureError(origin, problem) for bytes that are
// truncated, longer, or damaged; never reads outside the range, and
// allocates at most a few times `size`.
DeviceAnalysis decodeDevice(const char* data, size_t size, const char* origin = "device record");

// Where one device's record (an encodeDevice output) lies in a file part's bytes.
struct DeviceSpan {
    uint64_t offset = 0, length = 0;
};

// One file's part (file_part.h): its processes, warnings and intervals in a
// record, then each device in its own record, as the worker threads of
// `report DIR` and the Dask tasks keep them until the merge
// (analyzer/job/file_workers.h). Kept apart, a device's bytes serve the
// merge as they are (PartSet::addFilePart): it encoded each of them again
// and wrote them once more, most of its time alone on one thread. With
// `spans`: where each device's record was put (appended to), relative to
// the part's first byte, or found.
void encodeFilePart(const FilePart& part, std::string& out, std::vector<DeviceSpan>* spans = nullptr);
FilePart decodeFilePart(const char* data, size_t size, const char* origin = "file part record",
                        std::vector<DeviceSpan>* spans = nullptr);

}  // namespace osc::partial

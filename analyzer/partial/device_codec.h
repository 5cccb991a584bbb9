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
// before it.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/file_part.h"

#include <cstddef>
#include <string>

namespace osc::partial {

// Appends the bytes of `device` to `out` (whatever `out` held stays). Throws
// std::length_error for a string or list of 2^32 or more elements.
void encodeDevice(const DeviceAnalysis& device, std::string& out);

// The device whose bytes (exactly one encodeDevice output) are
// data[0, size). Throws CaptureError(origin, problem) for bytes that are
// truncated, longer, or damaged; never reads outside the range, and
// allocates at most a few times `size`.
DeviceAnalysis decodeDevice(const char* data, size_t size, const char* origin = "device record");

// The same for one file's part (file_part.h): its processes, warnings,
// devices and their intervals, as the worker threads of `report DIR` keep
// them until the merge (analyzer/job/file_workers.h).
void encodeFilePart(const FilePart& part, std::string& out);
FilePart decodeFilePart(const char* data, size_t size, const char* origin = "file part record");

}  // namespace osc::partial

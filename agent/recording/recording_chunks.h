// The chunk framing of activity.bin, shared by the recording's writer and
// reader (recording_format.h describes the folder).
#pragma once

#include <cstdint>
#include <string>

namespace osc::agent::recording::chunks {

enum Tag : uint32_t { kOrigin = 1, kGpu = 2, kString = 3, kApiName = 4, kOwnThread = 5, kBuffer = 6 };

struct ChunkHeader {
    uint32_t tag = 0;
    uint32_t reserved = 0;
    uint64_t bytes = 0;
};

// The manifest's "format" value.
inline constexpr const char* kFormatName = "overlapscope-cupti-recording";

}  // namespace osc::agent::recording::chunks

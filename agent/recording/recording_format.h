// The on-disk form of a raw CUPTI recording (docs/agent.md, "Raw CUPTI
// recordings"): one folder per capture, `<capture stem>.cupti/`, holding
//   recording.json  who recorded it, CUPTI/driver versions, record struct sizes;
//   activity.bin    (or activity.bin.gz) a stream of chunks, in the order the
//                   agent met them: the capture's time 0, GPUs, strings, API
//                   names, and every completed activity buffer byte for byte
//                   with the offsets of its records and of its string pointers.
// Plain C++: CUPTI's structs are known only to the recorder and the replay,
// which agree through the struct sizes in the manifest. Little-endian, like
// the machines CUPTI runs on.
#pragma once

#include "agent/core/process_identity.h"
#include "analyzer/capture/model.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace osc::agent::recording {

inline constexpr const char* kManifestFile = "recording.json";
inline constexpr const char* kActivityFile = "activity.bin";
inline constexpr const char* kFolderSuffix = ".cupti";
inline constexpr int kFormatVersion = 1;

// Everything recording.json says.
struct Manifest {
    int formatVersion = kFormatVersion;
    bool fabricated = false;  // made by a generator, not recorded on a GPU
    ProcessIdentity who;      // the recorded process: its replay is this process
    // The activity source's metadata (CUPTI version, driver version...),
    // written into the replayed capture as the live one had it.
    std::map<std::string, std::string> metadata;
    // Record struct sizes by kind name plus "cupti_api_version_compiled":
    // the replay refuses a recording its build would read differently.
    std::map<std::string, int64_t> layout;
};

// A string pointer inside a record: where it sits in the buffer and which
// recorded string it pointed to.
struct StringPatch {
    uint32_t fieldOffset = 0;
    uint32_t stringId = 0;
};

struct RecordedBuffer {
    std::vector<uint64_t> words;  // the bytes, 8-aligned like CUPTI's buffers
    size_t validBytes = 0;
    std::vector<uint32_t> recordOffsets;  // where cuptiActivityGetNextRecord found each record
    std::vector<StringPatch> patches;
    const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(words.data()); }
};

struct Recording {
    std::string directory;
    Manifest manifest;
    bool hasOrigin = false;
    int64_t originSourceNs = 0, originUtcNs = 0;
    std::vector<GpuInfo> gpus;         // as the driver described them
    std::vector<std::string> strings;  // by id
    std::map<std::pair<ApiKind, uint32_t>, std::string> apiNames;
    std::vector<uint32_t> ownThreads;  // the agent's own threads: their API records are not the job's
    std::vector<RecordedBuffer> buffers;
    // The last chunk was cut short (the process was killed while writing):
    // everything before it is kept.
    bool truncated = false;
};

// Writes one recording folder. Each method appends one chunk; buffers are
// flushed to the file as they come, so a killed process leaves every
// buffer written before the kill. Throws std::runtime_error naming the path.
class RecordingWriter {
public:
    // Creates `directory` (which must not exist yet) and writes the manifest.
    RecordingWriter(const std::string& directory, const Manifest& manifest);
    ~RecordingWriter();
    RecordingWriter(const RecordingWriter&) = delete;
    RecordingWriter& operator=(const RecordingWriter&) = delete;

    const std::string& directory() const { return directory_; }
    void writeOrigin(int64_t sourceNs, int64_t utcNs);
    void writeGpu(const GpuInfo& gpu);
    void writeOwnThread(uint32_t threadId);
    // Id of `text`, written the first time it is seen.
    uint32_t stringId(const char* text);
    // Written once per (kind, cbid).
    void writeApiName(ApiKind kind, uint32_t cbid, const std::string& name);
    bool hasApiName(ApiKind kind, uint32_t cbid) const { return apiNames_.count(apiKey(kind, cbid)) != 0; }
    void writeBuffer(const uint8_t* bytes, size_t validBytes, const std::vector<uint32_t>& recordOffsets,
                     const std::vector<StringPatch>& patches);

private:
    static uint64_t apiKey(ApiKind kind, uint32_t cbid) { return (static_cast<uint64_t>(kind) << 32) | cbid; }
    void chunk(uint32_t tag, const std::string& payload);

    std::string directory_;
    std::FILE* file_ = nullptr;
    std::unordered_map<std::string, uint32_t> strings_;
    std::unordered_map<uint64_t, bool> apiNames_;
};

// Reads a recording folder (activity.bin or activity.bin.gz). Throws
// CaptureError: one line naming the file and the problem.
Recording readRecording(const std::string& directory);

// The recording folders under `directory` (itself one, or its children),
// sorted by name.
std::vector<std::string> findRecordings(const std::string& directory);

}  // namespace osc::agent::recording

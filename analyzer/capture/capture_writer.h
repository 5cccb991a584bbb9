// Writes a capture file (docs/design.md section 2). Used by the agent's writer
// thread, by `overlapscope synth` and by tests, so the schema lives in one place.
//
// Rows go into an open transaction; commit() ends the batch so a killed
// process leaves a readable file with everything up to the last commit
// (WAL mode). close() adds indexes and the end-of-capture metadata.
#pragma once

#include "analyzer/capture/model.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace osc {

struct KernelRow {
    TimeNs start = 0, end = 0;
    uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
    uint64_t globalPid = 0;
    std::string_view demangledName, shortName;
    uint32_t gridX = 0, gridY = 0, gridZ = 0, blockX = 0, blockY = 0, blockZ = 0;
    uint32_t registersPerThread = 0, staticSharedMemory = 0, dynamicSharedMemory = 0;
    uint32_t graphId = 0;
    uint64_t graphNodeId = 0;
    // Optional: ids from internString(). When set (not kNoId) they are used
    // instead of the names above, which skips hashing the name per row.
    uint32_t demangledNameId = kNoId, shortNameId = kNoId;
};

struct CopyRow {
    TimeNs start = 0, end = 0;
    uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
    uint64_t globalPid = 0;
    uint64_t bytes = 0;
    CopyKind copyKind = CopyKind::Unknown;
    MemKind srcKind = MemKind::Unknown, dstKind = MemKind::Unknown;
    uint32_t srcDeviceId = kNoId, dstDeviceId = kNoId;
};

struct MemsetRow {
    TimeNs start = 0, end = 0;
    uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
    uint64_t globalPid = 0;
    uint32_t value = 0;
    uint64_t bytes = 0;
};

struct SyncRow {
    TimeNs start = 0, end = 0;
    uint32_t deviceId = 0, contextId = 0, streamId = kNoId, correlationId = 0;
    uint64_t globalPid = 0;
    SyncType syncType = SyncType::Unknown;
    uint32_t eventId = kNoId;
};

struct ApiCallRow {
    TimeNs start = 0, end = 0;
    ApiKind kind = ApiKind::Runtime;
    uint64_t globalTid = 0;
    uint32_t correlationId = 0;
    std::string_view name;
    int32_t returnValue = 0;
    uint32_t nameId = kNoId;  // optional: internString() id used instead of `name`
};

struct RangeRow {
    TimeNs start = 0;
    TimeNs end = -1;  // -1 for a mark
    RangeKind kind = RangeKind::PushPop;
    std::string_view text;
    std::string_view domain;  // empty = default domain
    uint64_t globalTid = 0, endGlobalTid = 0;
    uint32_t category = 0, color = 0;
    uint32_t textId = kNoId;  // optional: internString() id used instead of `text`
    bool onGpu = false;       // already on GPU time (imported GPU annotations)
};

struct CollectiveRow {
    uint64_t commHash = 0;
    int32_t rank = -1, nranks = -1;
    uint64_t seqNumber = 0;
    std::string_view func, datatype, algo, proto;
    uint64_t count = 0, bytes = 0;
    int32_t root = -1, nChannels = 0;
    uint32_t deviceId = kNoId;
    TimeNs enqueue = -1, gpuStart = -1, gpuEnd = -1;
};

// A CUDA event recorded on a stream (CUPTI CUDA_EVENT): with the
// stream-wait-event sync rows, it shows which stream waited for which.
struct CudaEventRow {
    // When the GPU passed the record; absent unless CUPTI collected it.
    std::optional<TimeNs> deviceTimestamp;
    uint32_t deviceId = kNoId, contextId = 0, streamId = kNoId, correlationId = 0, eventId = 0;
    uint64_t globalPid = 0;
    // Tells apart successive records of one event (CUPTI 13); absent before.
    std::optional<uint64_t> cudaEventSyncId;
};

// Things NVTX can name besides streams and threads (those have their own tables).
enum class NamedObject { Process, Device, Context };

struct ObjectNameRow {
    NamedObject kind = NamedObject::Device;
    uint64_t globalPid = 0;
    uint32_t deviceId = kNoId, contextId = kNoId;  // kNoId where the kind has none
    std::string_view name;
};

struct ProcessRow {
    uint64_t globalPid = 0;
    int64_t pid = 0;
    std::string_view name;
};

// How a capture ended (OVERLAPSCOPE_META "end_reason"). WriteFailed: the
// file could not be written (the disk filled up); it records no end_reason,
// as a killed process's file does not, so readers say it did not finish.
enum class CaptureEnd { Stopped, ProcessExit, Signal, WriteFailed };

struct CaptureWriterOptions {
    bool overwrite = false;  // replace an existing file instead of refusing
    // Copy WAL frames into the file on a helper thread (the agent's writer,
    // which must keep up with the GPU); otherwise SQLite's own checkpoint runs
    // in the committing thread.
    bool backgroundCheckpoint = false;
    // With backgroundCheckpoint: how far the WAL may grow under a writer that
    // is never idle before the writer waits for it to start over.
    int64_t walLimitBytes = int64_t{512} << 20;
};

class CaptureWriter {
public:
    // Creates a new file; refuses to overwrite an existing one unless
    // `overwrite` is set. Throws CaptureError naming the path.
    // `sessionStartUtcNs` anchors all timestamps (TARGET_INFO_SESSION_START_TIME).
    static std::unique_ptr<CaptureWriter> create(const std::string& path, int64_t sessionStartUtcNs,
                                                 const CaptureWriterOptions& options);
    static std::unique_ptr<CaptureWriter> create(const std::string& path, int64_t sessionStartUtcNs,
                                                 bool overwrite = false) {
        return create(path, sessionStartUtcNs, CaptureWriterOptions{.overwrite = overwrite});
    }
    ~CaptureWriter();
    CaptureWriter(const CaptureWriter&) = delete;
    CaptureWriter& operator=(const CaptureWriter&) = delete;

    void setMeta(std::string_view name, std::string_view value);
    void addGpu(const GpuInfo& gpu);
    void addProcess(const ProcessRow& process);
    uint32_t internString(std::string_view text);  // StringIds id

    void addKernel(const KernelRow& row);
    void addCopy(const CopyRow& row);
    void addMemset(const MemsetRow& row);
    void addSync(const SyncRow& row);
    void addApiCall(const ApiCallRow& row);
    void addRange(const RangeRow& row);
    void addCollective(const CollectiveRow& row);
    // A stream's name (nvtxNameCudaStream, importers): OVERLAPSCOPE_STREAM_NAME.
    void addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name);
    void addCudaEvent(const CudaEventRow& row);  // OVERLAPSCOPE_CUDA_EVENT
    // nsys's ThreadNames; a thread named again keeps only its newest name.
    void addThreadName(uint64_t globalTid, std::string_view name);
    void addObjectName(const ObjectNameRow& row);  // OVERLAPSCOPE_OBJECT_NAME

    // Ends the current batch transaction and starts the next one.
    void commit();
    // Commits, creates indexes, records how the capture ended. Idempotent.
    // Without `buildIndexes` the file reads the same, only external SQL
    // queries by device and time are slower: the agent's choice at process
    // exit, where building them (about 1 us a row) would hold the job up.
    void close(CaptureEnd how = CaptureEnd::Stopped, bool buildIndexes = true);

    const std::string& path() const { return path_; }
    uint64_t rowsWritten() const { return rows_; }

private:
    CaptureWriter() = default;
    struct Statements;
    std::string path_;
    std::unique_ptr<Statements> st_;  // the open database and its prepared statements
    uint64_t rows_ = 0;
    bool closed_ = false;
};

// Writes a whole in-memory process as one capture file (synth, tests, export
// round trips). Timestamps are written as they are in the model, and the
// file's TARGET_INFO_SESSION_START_TIME is the wall-clock time of the model's
// time 0 for that process (sessionStartUtcNs - timeOffsetNs), so reading the
// file back gives the same timestamps and the same wall-clock anchor.
void writeProcess(const Capture& capture, const Process& process, const std::string& path, bool overwrite = false);

}  // namespace osc

// Where GPU activity comes from: CUPTI in the real agent, a generator in the
// fake agent used by tests and the benchmark. The shape follows CUPTI's
// asynchronous buffer API: the source asks the BufferSink for empty buffers,
// fills them on its own threads, hands them back completed, and later decodes
// them on the writer thread. The application's threads therefore only ever
// take a buffer from a pool or give one back; decoding and SQLite happen
// elsewhere.
#pragma once

#include "analyzer/capture/row_sink.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace osc::agent {

class BufferSink {
public:
    virtual ~BufferSink() = default;
    // An empty buffer of `*size` bytes, or nullptr when the memory bound is
    // reached (the caller then drops records and counts them). Never blocks.
    virtual uint8_t* requestBuffer(size_t* size) = 0;
    // A filled buffer; `validBytes` of it hold records. Never blocks.
    virtual void bufferCompleted(uint8_t* buffer, size_t validBytes) = 0;
};

// Translates a source's timestamps into capture-relative ns.
struct DecodeContext {
    int64_t sourceOriginNs = 0;  // source timestamp at capture start (time 0)
    int64_t originUtcNs = 0;     // the same instant on the wall clock
    uint64_t globalPid = 0;      // nsys-packed pid of this process
    int64_t pid = 0;
    std::string capturePath;  // the capture file (names side files, e.g. a CUPTI recording)
};

// Time 0 of a capture on the source clock and the wall clock, read back to back.
struct CaptureOrigin {
    int64_t sourceNs = 0;
    int64_t utcNs = 0;
};

class ActivitySource {
public:
    virtual ~ActivitySource() = default;
    virtual const char* name() const = 0;
    // Begins delivering buffers to `sink`. Returns false with a one-line
    // reason when the source cannot run (no driver, CUPTI taken...).
    virtual bool start(BufferSink& sink, std::string& error) = 0;
    // Stops recording and hands every outstanding buffer to the sink.
    virtual void stop() = 0;
    // The first half of a stop by request (the stop grace, capture_session.h):
    // stops recording what the application does from now on (API calls, NVTX)
    // while GPU records of work already launched keep coming until stop().
    // False when the source has no such thing (a replayed recording); the
    // capture then stops at once.
    virtual bool stopRecordingLaunches() { return false; }
    // After stopRecordingLaunches(): the lowest correlation id of work
    // launched since, whose GPU records are not the capture's; 0 while none
    // is known. Any thread.
    virtual uint32_t firstCorrelationAfterStop() const { return 0; }
    // Hands back buffers whose records are complete; called about once a
    // second by the writer thread.
    virtual void flush() = 0;
    // Walks one completed buffer and emits its rows. Writer thread only.
    virtual void decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context, RowSink& rows) = 0;
    // Current timestamp on the source's clock (CLOCK_REALTIME ns for CUPTI's default).
    virtual int64_t timestampNs() const = 0;
    // Where a new capture's time 0 lies: now, for a live source; a replayed
    // recording answers with the recorded instant, so its file lines up with
    // the other ranks' files as the original would have.
    virtual CaptureOrigin captureOrigin() const;
    // Records lost inside the source since the last call (reset on read).
    virtual uint64_t takeDroppedRecords() = 0;
    // Versions and similar facts for OVERLAPSCOPE_META.
    virtual std::map<std::string, std::string> metadata() const { return {}; }
};

}  // namespace osc::agent

// One capture: one file, opened at start and closed at stop. Owns the writer
// thread that decodes completed activity buffers and collective records into
// the file. Every half commit interval it takes the source's partly filled
// buffers, writes what it has and commits, so a killed process loses at most
// the last interval (while the writer keeps up) and leaves a readable file.
//
// A capture stopped by request (detach, a duration) first lets the GPU
// finish what was launched inside it, as Nsight Systems does: the source
// stops recording launches, GPU records keep coming until every launch
// recorded has its own or the stop grace runs out, and GPU records of work
// launched after the stop instant are left out (StopWindowSink). A process
// that exits or is signalled does not wait for this.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/buffer_pool.h"
#include "agent/core/process_identity.h"
#include "agent/core/row_tap.h"
#include "agent/core/stop_window_sink.h"
#include "agent/core/tee_row_sink.h"
#include "analyzer/capture/capture_writer.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace osc::agent {

// A collective from the NCCL plugin with its strings owned, so it can wait in
// a queue after NCCL's descriptor is gone.
struct PendingCollective {
    // String views are re-pointed at the fields below on write; times are
    // CLOCK_REALTIME ns (-1 unknown) and become capture-relative on write.
    CollectiveRow row;
    std::string func, datatype, algo, proto;

    // The row to write into a capture whose time 0 is `originUtcNs`: views
    // at this object's strings (valid while it lives), times since time 0.
    CollectiveRow rowFrom(int64_t originUtcNs) const {
        CollectiveRow r = row;
        r.func = func;
        r.datatype = datatype;
        r.algo = algo;
        r.proto = proto;
        for (TimeNs* t : {&r.enqueue, &r.gpuStart, &r.gpuEnd})
            if (*t >= 0) *t -= originUtcNs;
        return r;
    }
};

// The NCCL plugin's operations still running, as rows without a GPU end
// (their GPU start when a channel started): written when a capture closes,
// so that a capture of a hung job says which collective each rank waits in.
using OpenCollectives = std::function<std::vector<PendingCollective>()>;

struct SessionConfig {
    // The capture file; empty for a stream without one, whose rows go to
    // `tap` only (the live metrics and step captures).
    std::string path;
    // Gets every row too, on the writer thread (row_tap.h); may be null.
    RowTap* tap = nullptr;
    ProcessIdentity who;
    // The most activity a killed process may lose; see above.
    int commitIntervalMs = 1000;
    // When the process is exiting or was signalled, stop() writes waiting
    // records for at most this long; the rest are counted as dropped, so the
    // application never waits much longer than this for the agent.
    int exitDrainMs = 1000;
    // How long a stop by request waits for the GPU records of launches made
    // before it (OVERLAPSCOPE_STOP_GRACE_MS); 0 = stop at once.
    int stopGraceMs = 200;
    // Called once, on the writer thread, when the file cannot be written any
    // more (disk full...): the owner should then stop this capture.
    std::function<void()> onWriteFailure;
    size_t maxPendingCollectives = 1u << 16;
    OpenCollectives openCollectives;  // asked once, after the stop grace
    uint64_t sequence = 1;            // 1 for the first capture in this process
};

class CaptureSession final : public BufferSink {
public:
    // Creates the capture file (throws CaptureError naming it when it
    // cannot), unless the config names none.
    CaptureSession(SessionConfig config, ActivitySource& source, BufferPool& pool);
    ~CaptureSession() override;
    CaptureSession(const CaptureSession&) = delete;
    CaptureSession& operator=(const CaptureSession&) = delete;

    enum class Start { Started, FileFailed, SourceFailed };
    // Starts the source and the writer thread. On failure the (empty) file is
    // removed and `error` says why; FileFailed concerns this file only,
    // SourceFailed the process (no driver, CUPTI taken).
    Start start(std::string& error);
    // Stops the source, writes the waiting buffers (for at most exitDrainMs
    // unless `how` is Stopped), writes the end metadata, closes. A Stopped
    // capture first waits up to stopGraceMs for launched work (see above).
    void stop(CaptureEnd how);
    bool running() const { return running_; }

    // Called from NCCL's threads; never blocks on the file.
    void submitCollective(PendingCollective&& collective);

    uint8_t* requestBuffer(size_t* size) override;
    void bufferCompleted(uint8_t* buffer, size_t validBytes) override;

    const std::string& path() const { return config_.path; }
    uint64_t droppedRecords() const { return dropped_.load(); }
    // Rows handed to SQLite so far (durable at the next commit).
    uint64_t rowsWritten() const { return rowsWritten_.load(); }
    // CPU time the writer thread used, known once stop() has joined it.
    int64_t writerCpuNs() const { return writerCpuNs_.load(); }
    // The writer failed (disk full...): records are being discarded.
    bool broken() const { return broken_.load(); }
    // Records that were still waiting when the exit drain ran out of time.
    uint64_t droppedAtExit() const { return droppedAtExit_.load(); }

private:
    // The stop grace (OVERLAPSCOPE_META's stop_grace_*): whether it ran, how
    // long it waited, the launches still without their GPU record when it
    // ended, and the GPU records of work launched after the stop left out.
    struct Grace {
        bool ran = false;
        int64_t waitedNs = 0;
        uint64_t unfinishedLaunches = 0, recordsLeftOut = 0;
    };

    void writerLoop();
    void letLaunchedWorkFinish();
    // Hands over what the source has; the number of buffers completed so far.
    uint64_t flushSourceCounting();
    void flushSource();
    void commitBatch();
    void drainAtStop();
    void drainCollectives();
    void decodeBuffer(const CompletedBuffer& buffer);
    // Releases a buffer unwritten, counting its records as dropped.
    uint64_t discardBuffer(const CompletedBuffer& buffer);
    void writeStartMetadata();
    void writeEndMetadata();
    void collectSourceDrops();
    void markBroken(const std::string& why);

    SessionConfig config_;
    ActivitySource& source_;
    BufferPool& pool_;
    std::unique_ptr<CaptureWriter> writer_;
    std::unique_ptr<RowSink> fileSink_;
    std::unique_ptr<TeeRowSink> tee_;       // with a tap: fileSink_ (if any) and the tap
    std::unique_ptr<StopWindowSink> sink_;  // in front of tee_ or fileSink_
    DecodeContext context_;
    int64_t startUtcNs_ = 0, startMonotonicNs_ = 0;

    std::thread thread_;
    // Written by stop() before stopping_ is set, read by the writer after.
    std::chrono::steady_clock::time_point drainDeadline_ = std::chrono::steady_clock::time_point::max();
    std::atomic<bool> stopping_{false};
    CaptureEnd stopHow_ = CaptureEnd::Stopped;  // set by stop() before stopping_
    bool running_ = false;
    bool closed_ = false;

    std::mutex sourceMutex_;  // flush (writer thread) vs. stop (controller)
    bool sourceStopped_ = false;
    std::mutex collectivesMutex_;
    std::vector<PendingCollective> collectives_;

    std::atomic<uint64_t> dropped_{0};
    std::atomic<uint64_t> rowsWritten_{0};
    std::atomic<int64_t> writerCpuNs_{0};
    std::atomic<bool> broken_{false};
    std::atomic<uint64_t> droppedAtExit_{0};
    uint64_t refusedAtStart_ = 0;

    // The stop grace: buffers handed to us and buffers decoded (or
    // discarded), so stop() knows when the writer has seen what a flush gave.
    std::atomic<uint64_t> buffersCompleted_{0}, buffersDecoded_{0};
    std::atomic<bool> windowClosing_{false};  // set once the source stopped recording launches
    Grace grace_;
};

int64_t realtimeNs();
int64_t monotonicNs();

}  // namespace osc::agent

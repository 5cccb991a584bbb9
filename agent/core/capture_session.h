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
//
// Every wait of a stop is bounded. A process that exits or is signalled
// gives the source (CUPTI's disable, flush and unsubscribe) at most
// sourceStopMs: if it is still stuck then, the capture is closed without it
// (`ignored_source_stop_gave_up` in its meta) and the stuck call is left to
// itself. A writer thread still inside the source's flush after the drain
// deadline (plus sourceStopMs) is given up on too, and the file left as its
// last commit made it; a writer still busy writing is waited for. Either way the
// session is then `abandoned()`: its owner must never destroy it, because a
// thread still stuck inside may touch it later.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/buffer_pool.h"
#include "agent/core/clocks.h"
#include "agent/core/ignored_calls.h"
#include "agent/core/pending_collective.h"
#include "agent/core/process_identity.h"
#include "agent/core/row_tap.h"
#include "agent/core/stop_window_sink.h"
#include "agent/core/tee_row_sink.h"
#include "analyzer/capture/capture_writer.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace osc::agent {

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
    // At an exit or a signal, how long the source may take to stop; a stop
    // by request waits for the writer thread at most writerStopMs.
    int sourceStopMs = 2000;
    int writerStopMs = 30000;
    // The calls the agent refused so far (process totals); the capture
    // writes what grew while it ran. May be empty.
    std::function<IgnoredCalls()> ignoredCalls;
};

class CaptureSession {
public:
    // Creates the capture file (throws CaptureError naming it when it
    // cannot), unless the config names none.
    CaptureSession(SessionConfig config, ActivitySource& source, BufferPool& pool);
    // Waits for a stuck source or writer to come back: an abandoned()
    // session must not be destroyed while they may still be stuck.
    ~CaptureSession();
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
    // The source did not stop in time (see above).
    bool sourceGaveUp() const { return sourceGaveUp_; }
    // A thread may still be stuck inside: never destroy this session.
    bool abandoned() const { return sourceGaveUp_ || writerGaveUp_; }

private:
    // The stop grace (OVERLAPSCOPE_META's stop_grace_*): whether it ran, how
    // long it waited, the launches still without their GPU record when it
    // ended, and the GPU records of work launched after the stop left out.
    struct Grace {
        bool ran = false;
        int64_t waitedNs = 0;
        uint64_t unfinishedLaunches = 0, recordsLeftOut = 0;
    };

    // Something another thread finishes, waited for with a bound.
    struct Completion {
        std::mutex mutex;
        std::condition_variable cv;
        bool done = false;
        void finish();
        void wait();
        bool waitUntil(std::chrono::steady_clock::time_point deadline);
    };

    void writerLoop();
    void letLaunchedWorkFinish();
    // Stops the source on a thread of its own, waiting at most sourceStopMs.
    void stopSourceBounded();
    // Joins the writer thread once it has finished; gives up past `deadline`
    // only while the writer is stuck inside the source.
    bool joinWriterBy(std::chrono::steady_clock::time_point deadline);
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
    std::shared_ptr<Completion> writerDone_ = std::make_shared<Completion>();
    std::shared_ptr<Completion> sourceStop_;  // a bounded source stop, once started
    bool sourceGaveUp_ = false, writerGaveUp_ = false;
    std::atomic<bool> writerInSource_{false};  // the writer is inside the source's flush
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
    IgnoredCalls ignoredAtStart_;

    // The stop grace: buffers decoded (or discarded), against what the pool
    // queued, so stop() knows when the writer has seen what a flush gave.
    std::atomic<uint64_t> buffersDecoded_{0};
    uint64_t completedAtStart_ = 0;
    std::atomic<bool> windowClosing_{false};  // set once the source stopped recording launches
    Grace grace_;
};

}  // namespace osc::agent

#include "agent/core/capture_session.h"

#include "agent/core/counting_row_sink.h"
#include "analyzer/capture/background_thread.h"
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/schema.h"

#include <pthread.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace osc::agent {
namespace {

void removeCaptureFiles(const std::string& path) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((path + suffix).c_str());
}

}  // namespace

CaptureOrigin ActivitySource::captureOrigin() const { return {timestampNs(), realtimeNs()}; }

CaptureSession::CaptureSession(SessionConfig config, ActivitySource& source, BufferPool& pool)
    : config_(std::move(config)), source_(source), pool_(pool) {
    // Time 0 of the file is "now" on both clocks, taken back to back: the
    // source clock for subtracting, the wall clock for alignment across ranks.
    const CaptureOrigin origin = source_.captureOrigin();
    context_.sourceOriginNs = origin.sourceNs;
    startUtcNs_ = context_.originUtcNs = origin.utcNs;
    startMonotonicNs_ = monotonicNs();
    context_.pid = config_.who.pid;
    context_.globalPid = schema::packGlobalPid(config_.who.pid);
    context_.capturePath = config_.path;
    if (!config_.path.empty()) {
        // The writer thread must keep up with the GPU: WAL copying goes to a helper.
        writer_ = CaptureWriter::create(config_.path, startUtcNs_, CaptureWriterOptions{.backgroundCheckpoint = true});
        fileSink_ = std::make_unique<WriterRowSink>(*writer_);
    } else if (!config_.tap) {
        throw std::invalid_argument("a capture session needs a file or a tap");
    }
    RowSink* front = fileSink_.get();
    if (config_.tap) {
        tee_ = std::make_unique<TeeRowSink>(fileSink_.get(), *config_.tap);
        front = tee_.get();
    }
    sink_ = std::make_unique<StopWindowSink>(*front);
}

CaptureSession::~CaptureSession() {
    if (running_) stop(CaptureEnd::ProcessExit);
    // Only a session given up on gets here with these still running, and
    // only once they came back (its owner leaks it otherwise).
    if (sourceStop_) sourceStop_->wait();
    if (thread_.joinable()) thread_.join();
}

void CaptureSession::Completion::finish() {
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    cv.notify_all();
}

void CaptureSession::Completion::wait() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return done; });
}

bool CaptureSession::Completion::waitUntil(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex);
    return cv.wait_until(lock, deadline, [&] { return done; });
}

CaptureSession::Start CaptureSession::start(std::string& error) {
    // Buffers completed after the previous capture stopped belong to nobody.
    pool_.openIntake();
    refusedAtStart_ = pool_.refusedRequests();
    completedAtStart_ = pool_.completedTotal();
    if (config_.ignoredCalls) ignoredAtStart_ = config_.ignoredCalls();
    (void)source_.takeDroppedRecords();
    if (writer_) {
        try {
            writeStartMetadata();
            writer_->commit();
        } catch (const std::exception& e) {
            error = e.what();
            writer_.reset();
            removeCaptureFiles(config_.path);
            return Start::FileFailed;
        }
    }
    if (config_.tap) config_.tap->streamStarted(context_, source_.metadata());
    thread_ = startBackgroundThread([this] { writerLoop(); });
    if (!source_.start(pool_, error)) {
        stopping_ = true;
        pool_.wake();
        thread_.join();
        pool_.closeIntake();
        if (writer_) {
            try {
                writer_->close(CaptureEnd::Stopped);
            } catch (const std::exception&) {}
            writer_.reset();
            removeCaptureFiles(config_.path);
        }
        return Start::SourceFailed;
    }
    running_ = true;
    return Start::Started;
}

void CaptureSession::stop(CaptureEnd how) {
    using clock = std::chrono::steady_clock;
    if (closed_) return;
    closed_ = true;
    stopHow_ = how;
    const bool exiting = how != CaptureEnd::Stopped;
    // The application waits for an exit or a signal: bounded from here on.
    if (exiting)
        drainDeadline_ = clock::now() + std::chrono::milliseconds(config_.exitDrainMs);
    else if (running_)
        letLaunchedWorkFinish();
    if (running_) {
        if (exiting) {
            stopSourceBounded();
        } else {
            std::lock_guard lock(sourceMutex_);  // not while the writer thread flushes it
            sourceStopped_ = true;
            source_.stop();  // hands back every outstanding buffer
        }
    }
    running_ = false;
    stopping_ = true;
    pool_.wake();
    // The writer finishes within the drain deadline (plus a batch in progress).
    const auto writerDeadline = exiting ? drainDeadline_ + std::chrono::milliseconds(config_.sourceStopMs)
                                        : clock::now() + std::chrono::milliseconds(config_.writerStopMs);
    if (!joinWriterBy(writerDeadline)) {
        // Stuck in the source's flush: the file keeps its last commit, as a
        // killed process's would; nothing here may touch it any more.
        writerGaveUp_ = true;
        pool_.closeIntake();
        std::fprintf(stderr,
                     "overlapscope-agent: the capture's writer did not finish in time (stuck in the activity "
                     "source); %s keeps what was committed\n",
                     config_.path.empty() ? "the stream" : config_.path.c_str());
        return;
    }
    // The writer took what it could: later buffers go straight back to the pool.
    pool_.closeIntake();
    if (!writer_) return;
    if (grace_.ran) grace_.recordsLeftOut = sink_->leftOut();  // the writer has finished with the sink
    try {
        if (!broken_) {
            // Whatever still runs after the grace may never end (a hang).
            if (config_.openCollectives)
                for (auto& c : config_.openCollectives()) submitCollective(std::move(c));
            drainCollectives();
            writeEndMetadata();
        }
        // A process that is exiting does not wait for indexes either. A
        // capture whose file failed is not "stopped": what it lost shows.
        writer_->close(broken_ ? CaptureEnd::WriteFailed : how, /*buildIndexes=*/how == CaptureEnd::Stopped);
    } catch (const std::exception& e) {
        // A broken capture has said so once already.
        if (!broken_) std::fprintf(stderr, "overlapscope-agent: %s\n", e.what());
    }
    writer_.reset();
}

void CaptureSession::stopSourceBounded() {
    // CUPTI's disable, flush and unsubscribe have no time bound of their own
    // (a mesh rank was SIGKILLed 30 s after SIGTERM inside them): they run on
    // a thread of their own, and the close goes on without them after
    // sourceStopMs. The thread touches only the source, sourceMutex_ and
    // the completion; an abandoned session is never destroyed.
    auto done = std::make_shared<Completion>();
    sourceStop_ = done;
    try {
        startBackgroundThread([this, done] {
            {
                std::lock_guard lock(sourceMutex_);
                sourceStopped_ = true;
                source_.stop();
            }
            done->finish();
        }).detach();
    } catch (const std::system_error&) {
        // No thread to be had: stop it here, unbounded, as before.
        std::lock_guard lock(sourceMutex_);
        sourceStopped_ = true;
        source_.stop();
        done->finish();
    }
    if (done->waitUntil(std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.sourceStopMs))) return;
    sourceGaveUp_ = true;
    std::fprintf(stderr,
                 "overlapscope-agent: the activity source (%s) did not stop within %d ms; closing the capture "
                 "without it\n",
                 source_.name(), config_.sourceStopMs);
}

bool CaptureSession::joinWriterBy(std::chrono::steady_clock::time_point deadline) {
    if (!thread_.joinable()) return true;
    // Past the deadline, a writer still working (a batch of rows, the live
    // pipeline's last step) is waited for; one stuck inside the source is not.
    for (auto until = deadline; !writerDone_->waitUntil(until);) {
        if (writerInSource_.load()) return false;
        until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    }
    thread_.join();
    return true;
}

void CaptureSession::letLaunchedWorkFinish() {
    using clock = std::chrono::steady_clock;
    if (config_.stopGraceMs <= 0 || broken_) return;
    const auto begin = clock::now();
    const auto deadline = begin + std::chrono::milliseconds(config_.stopGraceMs);
    {
        std::lock_guard lock(sourceMutex_);
        if (!source_.stopRecordingLaunches()) return;
    }
    windowClosing_.store(true, std::memory_order_release);
    grace_.ran = true;
    // Flushing often enough that a kernel's record is written soon after it
    // ran, rarely enough that the flushes cost the application nothing.
    constexpr auto kPoll = std::chrono::milliseconds(2);
    for (;;) {
        const uint64_t handedOver = flushSourceCounting();
        // What the flush handed over must be decoded before the count of
        // launches still waiting means anything.
        bool seen = false;
        while (!(seen = buffersDecoded_.load(std::memory_order_acquire) >= handedOver) && !broken_ &&
               clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (seen && sink_->awaited().count() == 0) break;
        const auto now = clock::now();
        if (now >= deadline || broken_) break;
        std::this_thread::sleep_until(std::min(now + kPoll, deadline));
    }
    grace_.waitedNs = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - begin).count();
    grace_.unfinishedLaunches = sink_->awaited().count();
}

uint64_t CaptureSession::flushSourceCounting() {
    std::lock_guard lock(sourceMutex_);
    source_.flush();
    return pool_.completedTotal() - completedAtStart_;
}

void CaptureSession::submitCollective(PendingCollective&& collective) {
    std::lock_guard lock(collectivesMutex_);
    if (collectives_.size() >= config_.maxPendingCollectives) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    collectives_.push_back(std::move(collective));
}

void CaptureSession::writerLoop() {
    ::pthread_setname_np(::pthread_self(), "osc-writer");  // `top -H` tells the agent's threads apart
    using clock = std::chrono::steady_clock;
    // A record handed over by the flush at the end of one cycle is committed
    // at once; one recorded just after it waits for the next cycle. Half an
    // interval per cycle leaves the other half for writing the batch.
    const auto cycle = std::chrono::milliseconds(std::max(1, config_.commitIntervalMs / 2));
    auto nextCommit = clock::now() + cycle;
    CompletedBuffer buffer;
    for (;;) {
        if (pool_.popCompleted(buffer, nextCommit)) decodeBuffer(buffer);
        if (stopping_) break;
        const auto now = clock::now();
        if (now < nextCommit) continue;
        flushSource();
        // What the flush handed over, and no more: under overload the queue never empties.
        for (size_t n = pool_.completedCount(); n > 0 && !stopping_ && pool_.tryPopCompleted(buffer); --n)
            decodeBuffer(buffer);
        commitBatch();
        if (config_.tap) config_.tap->cycleEnded(dropped_.load());
        nextCommit += cycle;
        if (nextCommit <= clock::now()) nextCommit = clock::now() + cycle;  // fell behind: no burst of commits
    }
    drainAtStop();
    collectSourceDrops();
    if (config_.tap) {
        drainCollectives();  // the tap's last rows: stop() finds none left for the file
        config_.tap->streamEnded(stopHow_, dropped_.load());
    }
    writerCpuNs_ = threadCpuNs();
    writerDone_->finish();
}

void CaptureSession::flushSource() {
    // Never waits for a stop in progress (it hands everything over anyway,
    // and may be stuck in CUPTI: the writer must still come back).
    std::unique_lock lock(sourceMutex_, std::try_to_lock);
    if (!lock.owns_lock() || sourceStopped_) return;
    writerInSource_ = true;
    source_.flush();
    writerInSource_ = false;
}

void CaptureSession::commitBatch() {
    drainCollectives();
    collectSourceDrops();
    if (broken_ || !writer_) return;
    try {
        writer_->commit();
    } catch (const std::exception& e) {
        markBroken(e.what());
    }
}

void CaptureSession::drainAtStop() {
    CompletedBuffer buffer;
    while (pool_.tryPopCompleted(buffer)) {
        if (std::chrono::steady_clock::now() < drainDeadline_)
            decodeBuffer(buffer);
        else
            droppedAtExit_ += discardBuffer(buffer);
    }
}

void CaptureSession::decodeBuffer(const CompletedBuffer& buffer) {
    if (broken_) {
        discardBuffer(buffer);
        return;
    }
    // Whatever launched after the stop instant has its correlation id (known
    // once launched, so before its GPU record can be in this buffer).
    if (windowClosing_.load(std::memory_order_acquire)) sink_->closeAt(source_.firstCorrelationAfterStop());
    try {
        source_.decode(buffer.data, buffer.validBytes, context_, *sink_);
        if (writer_) rowsWritten_.store(writer_->rowsWritten(), std::memory_order_relaxed);
    } catch (const std::exception& e) {
        markBroken(e.what());
    }
    pool_.release(buffer.data);
    buffersDecoded_.fetch_add(1, std::memory_order_release);
}

uint64_t CaptureSession::discardBuffer(const CompletedBuffer& buffer) {
    // Decoding without writing: tens of millions of records a second.
    CountingRowSink counter;
    try {
        source_.decode(buffer.data, buffer.validBytes, context_, counter);
    } catch (const std::exception&) {
        // Counted as far as it could be read.
    }
    pool_.release(buffer.data);
    dropped_.fetch_add(counter.rows, std::memory_order_relaxed);
    buffersDecoded_.fetch_add(1, std::memory_order_release);
    return counter.rows;
}

void CaptureSession::drainCollectives() {
    std::vector<PendingCollective> batch;
    {
        std::lock_guard lock(collectivesMutex_);
        batch.swap(collectives_);
    }
    if (broken_) return;
    try {
        // Plugin times are wall-clock ns; the file wants ns since its time 0.
        for (const auto& c : batch) sink_->addCollective(c.rowFrom(startUtcNs_));
    } catch (const std::exception& e) {
        markBroken(e.what());
    }
}

void CaptureSession::collectSourceDrops() {
    dropped_.fetch_add(source_.takeDroppedRecords(), std::memory_order_relaxed);
}

void CaptureSession::markBroken(const std::string& why) {
    if (broken_.exchange(true)) return;
    std::fprintf(stderr, "overlapscope-agent: %s: capture ended, the file keeps what was committed before\n",
                 why.c_str());
    if (config_.onWriteFailure) config_.onWriteFailure();
}

void CaptureSession::writeStartMetadata() {
    namespace m = schema::meta;
    const auto& who = config_.who;
    auto set = [&](std::string_view k, const std::string& v) { writer_->setMeta(k, v); };
    // format_version and tool_version come from CaptureWriter::create.
    set(m::kHost, who.host);
    set(m::kPid, std::to_string(who.pid));
    set(m::kRank, std::to_string(who.rank));
    set(m::kLocalRank, std::to_string(who.localRank));
    set(m::kWorldSize, std::to_string(who.worldSize));
    set(m::kCommandLine, who.commandLine);
    set(m::kCaptureStartUtcNs, std::to_string(startUtcNs_));
    // The same instant on the other clocks, so ranks and hosts can be re-aligned later.
    set("capture_start_monotonic_ns", std::to_string(startMonotonicNs_));
    set("capture_start_source_ns", std::to_string(context_.sourceOriginNs));
    set("capture_sequence", std::to_string(config_.sequence));
    set("activity_source", source_.name());
    set("agent_buffer_bytes", std::to_string(pool_.bufferBytes() * pool_.capacityBuffers()));
    for (const auto& [k, v] : source_.metadata()) set(k, v);
    writer_->addProcess(ProcessRow{context_.globalPid, who.pid, who.executable});
}

void CaptureSession::writeEndMetadata() {
    auto set = [&](std::string_view k, const std::string& v) { writer_->setMeta(k, v); };
    set(schema::meta::kCaptureStopUtcNs, std::to_string(realtimeNs()));
    set("capture_stop_monotonic_ns", std::to_string(monotonicNs()));
    set("capture_stop_source_ns", std::to_string(source_.timestampNs()));
    set(schema::meta::kDroppedRecords, std::to_string(dropped_.load()));
    set("dropped_at_exit", std::to_string(droppedAtExit_.load()));
    set("buffers_refused", std::to_string(pool_.refusedRequests() - refusedAtStart_));
    // What the capture cost this process on the writer thread (decoding and
    // SQLite; the indexes built at close come after this).
    set("agent_writer_cpu_ns", std::to_string(writerCpuNs_.load()));
    // Calls refused while this capture ran (docs/agent.md, "What the agent trusts").
    IgnoredCalls ignored = config_.ignoredCalls ? config_.ignoredCalls().since(ignoredAtStart_) : IgnoredCalls{};
    if (sourceGaveUp_) ignored[IgnoredReason::SourceStopGaveUp] += 1;
    for (size_t i = 0; i < kIgnoredReasons; ++i) {
        const auto reason = static_cast<IgnoredReason>(i);
        set("ignored_" + std::string(ignoredReasonName(reason)), std::to_string(ignored[reason]));
    }
    if (grace_.ran) {
        set("stop_grace_ms", std::to_string(config_.stopGraceMs));
        set("stop_grace_waited_ns", std::to_string(grace_.waitedNs));
        set("stop_grace_unfinished_launches", std::to_string(grace_.unfinishedLaunches));
        set("stop_grace_records_left_out", std::to_string(grace_.recordsLeftOut));
    }
}

}  // namespace osc::agent

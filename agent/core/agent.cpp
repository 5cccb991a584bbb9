#include "agent/core/agent.h"

#include "agent/core/control_server.h"
#include "agent/core/partial_writer.h"
#include "agent/core/signal_bridge.h"
#include "agent/live/live_pipeline.h"
#include "agent/live/metrics_publisher.h"
#include "agent/live/telemetry.h"
#include "agent/live/trigger_relay.h"
#include "analyzer/capture/background_thread.h"

#include <algorithm>
#include <cstdio>

namespace osc::agent {
namespace {

std::chrono::steady_clock::time_point after(double seconds) {
    // Requests and settings are checked against kMaxSeconds already; this
    // keeps the conversion to integer nanoseconds defined whatever comes.
    seconds = std::clamp(seconds, 0.0, control::kMaxSeconds);
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

const char* stateName(AgentState state) {
    switch (state) {
        case AgentState::Dormant:
            return "dormant";
        case AgentState::Capturing:
            return "capturing";
        case AgentState::Stopped:
            return "stopped";
        case AgentState::Disabled:
            return "disabled";
    }
    return "unknown";
}

Agent::Agent(AgentSettings settings, ProcessIdentity who, std::unique_ptr<ActivitySource> source)
    : settings_(std::move(settings)),
      who_(std::move(who)),
      pool_(settings_.bufferBytes, activityBufferBytes(settings_.bufferBytes)),
      source_(std::move(source)) {}

Agent::~Agent() { shutdown(CaptureEnd::ProcessExit); }

void Agent::boot() {
    if (settings_.partial) partials();
    signals_ = std::make_unique<SignalBridge>([this](int) {
        std::string ignored;
        stopCapture(CaptureEnd::Signal, ignored);
        // The process is going: its metrics file must not outlive it.
        if (publisher_) publisher_->stop();
    });
    {
        std::lock_guard lock(stateMutex_);
        if (!settings_.dormant) {
            if (settings_.delayS > 0) startAt_ = after(settings_.delayS);
            if (settings_.durationS > 0) scheduledDurationS_ = settings_.durationS;
        }
    }
    timer_ = startBackgroundThread([this] { timerLoop(); });
    bootLive();
    // Starting right away (not from the timer) keeps the first kernels in the capture.
    if (!settings_.dormant && settings_.delayS <= 0) {
        std::string error;
        if (!startCapture(scheduledDurationS_, std::nullopt, error) && state() != AgentState::Disabled)
            std::fprintf(stderr, "overlapscope-agent: %s\n", error.c_str());
    }
    // Opened last: once the socket is visible, a non-dormant capture is running.
    if (settings_.control) {
        ControlServer::Options opt;
        opt.directory = settings_.socketDir;
        opt.pid = who_.pid;
        control_ = std::make_unique<ControlServer>(
            opt, [this](const control::ControlRequest& r) { return handle(r); }, [this] { return status(); });
        std::string error;
        if (control_->start(error)) {
            socketPath_ = control_->socketPath();
            if (!control_->fallbackReason().empty())
                std::fprintf(stderr, "overlapscope-agent: %s; control socket is %s instead\n",
                             control_->fallbackReason().c_str(), socketPath_.c_str());
        } else {
            std::fprintf(stderr, "overlapscope-agent: %s: control socket disabled\n", error.c_str());
            control_.reset();
        }
    }
}

std::string Agent::nextCapturePath(const std::string& dir) {
    std::lock_guard lock(stateMutex_);
    ++captures_;
    return captureFileName(dir, who_, captures_);
}

PartialWriter& Agent::partials() {
    std::lock_guard lock(partialsMutex_);
    if (!partials_) partials_ = std::make_unique<PartialWriter>(settings_.analysis);
    return *partials_;
}

bool Agent::startStreamLocked(std::string& error) {
    {
        std::lock_guard lock(stateMutex_);
        if (session_) return true;
        if (shuttingDown_) {
            error = "the process is exiting";
            return false;
        }
        if (state_ == AgentState::Disabled) {
            error = "capture is disabled in this process (" + lastOutput_ + ")";
            return false;
        }
    }
    SessionConfig config;
    config.who = who_;
    config.commitIntervalMs = settings_.commitIntervalMs;
    config.stopGraceMs = 0;  // steps are cut by their ranges, not at an instant
    config.tap = live_.get();
    config.ignoredCalls = [this] { return ignoredCalls(); };
    std::unique_ptr<CaptureSession> session;
    try {
        session = std::make_unique<CaptureSession>(config, *source_, pool_);
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
    switch (session->start(error)) {
        case CaptureSession::Start::Started:
            break;
        case CaptureSession::Start::FileFailed:
            return false;
        case CaptureSession::Start::SourceFailed:
            disable(error);
            return false;
    }
    std::lock_guard lock(stateMutex_);
    session_ = std::move(session);
    streamOnly_ = true;
    return true;
}

void Agent::stopSessionLocked(CaptureEnd how) {
    std::unique_ptr<CaptureSession> session;
    bool hadFile = false;
    {
        std::lock_guard lock(stateMutex_);
        if (!session_) return;
        session = std::move(session_);  // NCCL threads now see no session
        hadFile = !streamOnly_;
        streamOnly_ = false;
        stopAt_.reset();
    }
    session->stop(how);
    if (live_) live_->setFileCaptureRunning(false);
    if (session->abandoned()) {
        // A thread is still stuck inside the source or the writer: the
        // session is left alive for it, and the source is not trusted again.
        {
            std::lock_guard lock(stateMutex_);
            if (session->sourceGaveUp()) ++sourceGaveUps_;
            if (hadFile) lastOutput_ = session->path();
        }
        (void)session.release();
        disable("the activity source did not stop in time");
        return;
    }
    if (!hadFile) return;
    {
        std::lock_guard lock(stateMutex_);
        lastOutput_ = session->path();
        lastDropped_ = session->droppedRecords();
        state_ = AgentState::Stopped;
    }
    if (settings_.partial) partials().submit(session->path());
}

bool Agent::streamWantedLocked() const {
    if (telemetry_) return true;
    if (live_ && live_->captureActive()) return true;
    std::lock_guard lock(stateMutex_);
    return watchUntil_ && std::chrono::steady_clock::now() < *watchUntil_;
}

void Agent::settleStreamLocked() {
    bool stream;
    {
        std::lock_guard lock(stateMutex_);
        stream = session_ && streamOnly_;
    }
    if (stream && !streamWantedLocked()) stopSessionLocked(CaptureEnd::Stopped);
}

bool Agent::startCapture(std::optional<double> durationS, std::optional<std::string> outputDir, std::string& error) {
    std::lock_guard op(opMutex_);
    uint64_t sequence;
    OpenCollectives openCollectives;
    {
        std::lock_guard lock(stateMutex_);
        if (shuttingDown_) {
            error = "the process is exiting";
            return false;
        }
        if (state_ == AgentState::Disabled) {
            error = "capture is disabled in this process (" + lastOutput_ + ")";
            return false;
        }
        if (session_ && !streamOnly_) {
            error = "a capture is already running (" + session_->path() + ")";
            return false;
        }
        sequence = captures_ + 1;
        openCollectives = openCollectives_;
    }
    if (live_ && live_->captureActive()) {
        error = "a step capture is in progress; detach it first";
        return false;
    }
    // Before the file exists, so a SIGTERM from now on finds a capture to close.
    if (signals_) signals_->install();
    SessionConfig config;
    config.who = who_;
    config.commitIntervalMs = settings_.commitIntervalMs;
    config.stopGraceMs = settings_.stopGraceMs;
    config.sequence = sequence;
    config.openCollectives = std::move(openCollectives);
    config.path = captureFileName(outputDir.value_or(settings_.outputDir), who_, sequence);
    config.tap = telemetry_ ? live_.get() : nullptr;
    config.ignoredCalls = [this] { return ignoredCalls(); };
    // The timer thread ends a capture whose file cannot be written any more.
    config.onWriteFailure = [this] {
        std::lock_guard lock(stateMutex_);
        timerCv_.notify_all();
    };
    std::unique_ptr<CaptureSession> session;
    try {
        session = std::make_unique<CaptureSession>(config, *source_, pool_);
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
    // The file takes the stream's place (one CUPTI subscriber per process);
    // the live pipeline rides on the capture until the stream comes back.
    stopSessionLocked(CaptureEnd::Stopped);
    const auto restoreStream = [&] {
        std::string ignored;
        if (streamWantedLocked()) startStreamLocked(ignored);
    };
    switch (session->start(error)) {
        case CaptureSession::Start::Started:
            break;
        case CaptureSession::Start::FileFailed:
            restoreStream();
            return false;  // another output may work
        case CaptureSession::Start::SourceFailed:
            // The source cannot run in this process at all (no driver, CUPTI taken).
            disable(error);
            return false;
    }
    if (live_) live_->setFileCaptureRunning(true);
    {
        std::lock_guard lock(stateMutex_);
        session_ = std::move(session);
        streamOnly_ = false;
        state_ = AgentState::Capturing;
        ++captures_;
        lastOutput_ = session_->path();
        stopAt_.reset();
        if (durationS && *durationS > 0) stopAt_ = after(*durationS);
    }
    timerCv_.notify_all();
    return true;
}

bool Agent::watch(double seconds, std::string& error) {
    std::lock_guard op(opMutex_);
    if (!ensureLive(error)) return false;
    {
        std::lock_guard lock(stateMutex_);
        watchUntil_ = after(seconds);
    }
    timerCv_.notify_all();
    return startStreamLocked(error);
}

bool Agent::stopCapture(CaptureEnd how, std::string& error) {
    std::lock_guard op(opMutex_);
    bool fileCapture, anySession;
    {
        std::lock_guard lock(stateMutex_);
        fileCapture = session_ && !streamOnly_;
        anySession = session_ != nullptr;
    }
    if (how != CaptureEnd::Stopped) {  // a signal: close everything, the process is going
        if (!anySession) {
            error = "no capture is running";
            return false;
        }
        stopSessionLocked(how);
        return true;
    }
    if (fileCapture) {
        stopSessionLocked(how);
        std::string ignored;
        if (streamWantedLocked()) startStreamLocked(ignored);
        return true;
    }
    if (live_ && live_->captureActive()) {
        OpenCollectives open;
        {
            std::lock_guard lock(stateMutex_);
            open = openCollectives_;
        }
        live_->cancel(error, open ? open() : std::vector<PendingCollective>{});
        settleStreamLocked();
        std::lock_guard lock(stateMutex_);
        state_ = AgentState::Stopped;
        return true;
    }
    error = "no capture is running";
    return false;
}

void Agent::disable(const std::string& why) {
    std::fprintf(stderr, "overlapscope-agent: %s: capture disabled\n", why.c_str());
    std::lock_guard lock(stateMutex_);
    state_ = AgentState::Disabled;
    lastOutput_ = why;
}

void Agent::shutdown(CaptureEnd how) {
    {
        std::lock_guard lock(stateMutex_);
        if (shuttingDown_) return;
        shuttingDown_ = true;
    }
    timerCv_.notify_all();
    if (timer_.joinable()) timer_.join();
    if (triggers_) triggers_->stop();
    if (control_) control_->stop();
    {
        std::lock_guard op(opMutex_);
        stopSessionLocked(how);
    }
    if (publisher_) publisher_->stop();
    {
        std::lock_guard lock(partialsMutex_);
        if (partials_) partials_->finish();  // the last capture's partial, then the thread ends
    }
    if (signals_) signals_->shutdown();
}

void Agent::timerLoop() {
    std::unique_lock lock(stateMutex_);
    while (!shuttingDown_) {
        const auto now = std::chrono::steady_clock::now();
        std::string error;
        if (session_ && session_->broken()) {
            lock.unlock();
            stopCapture(CaptureEnd::Stopped, error);
            lock.lock();
        } else if (startAt_ && now >= *startAt_) {
            startAt_.reset();
            const auto duration = scheduledDurationS_;
            lock.unlock();
            if (!startCapture(duration, std::nullopt, error) && state() != AgentState::Disabled)
                std::fprintf(stderr, "overlapscope-agent: %s\n", error.c_str());
            lock.lock();
        } else if (stopAt_ && now >= *stopAt_) {
            stopAt_.reset();
            lock.unlock();
            stopCapture(CaptureEnd::Stopped, error);
            lock.lock();
        } else if (stepCaptureEnded_ || (watchUntil_ && now >= *watchUntil_)) {
            // A step capture closed, or a watch ran out: the stream may go.
            stepCaptureEnded_ = false;
            if (watchUntil_ && now >= *watchUntil_) watchUntil_.reset();
            const bool wasCapturing = state_ == AgentState::Capturing && streamOnly_;
            lock.unlock();
            {
                std::lock_guard op(opMutex_);
                settleStreamLocked();
            }
            lock.lock();
            const live::LivePipeline* live = liveView_.load(std::memory_order_acquire);
            if (wasCapturing && !(live && live->captureActive()) && (!session_ || streamOnly_))
                state_ = AgentState::Stopped;
        } else {
            auto next = std::chrono::steady_clock::time_point::max();
            if (startAt_) next = std::min(next, *startAt_);
            if (stopAt_) next = std::min(next, *stopAt_);
            if (watchUntil_) next = std::min(next, *watchUntil_);
            if (next == std::chrono::steady_clock::time_point::max())
                timerCv_.wait(lock);
            else
                timerCv_.wait_until(lock, next);
        }
    }
}

control::ControlReply Agent::handle(const control::ControlRequest& request) {
    control::ControlReply reply;
    switch (request.command) {
        case control::ControlCommand::Status:
            reply.ok = true;
            break;
        case control::ControlCommand::Start:
            if (request.steps)
                reply.ok = startStepCapture(*request.steps, request.atStep, request.outputDir, request.partial,
                                            request.trigger, reply.error);
            else
                reply.ok = startCapture(request.durationS, request.outputDir, reply.error);
            break;
        case control::ControlCommand::Dump: {
            Dumped dumped;
            reply.ok = dump(request.outputDir, dumped, reply.error);
            reply.status = status();
            if (reply.ok) {
                // The steps written, not those the ring holds by now.
                reply.status.output = dumped.path;
                reply.status.lookbackFirst = dumped.first;
                reply.status.lookbackLast = dumped.last;
            }
            return reply;
        }
        case control::ControlCommand::Watch:
            reply.ok = watch(request.watchS.value_or(60), reply.error);
            break;
        case control::ControlCommand::Stop:
            reply.ok = stopCapture(CaptureEnd::Stopped, reply.error);
            reply.status = status();
            // A step capture stopped before its first step wrote nothing:
            // the last file of an earlier capture is not this one's.
            if (reply.ok && reply.status.stepCapture && reply.status.stepCapture->state == "stopped" &&
                reply.status.stepCapture->path.empty() && reply.status.state != "capturing")
                reply.status.output.clear();
            return reply;
    }
    reply.status = status();
    return reply;
}

control::AgentStatus Agent::status() const {
    control::AgentStatus s;
    {
        std::lock_guard lock(stateMutex_);
        s.pid = who_.pid;
        s.rank = who_.rank;
        s.host = who_.host;
        // Recording without a file (live metrics, a watch): not dormant.
        s.state = session_ && streamOnly_ && state_ != AgentState::Capturing ? "live" : stateName(state_);
        s.output = session_ && !streamOnly_ ? session_->path() : lastOutput_;
        s.captures = captures_;
        s.dropped = session_ && !streamOnly_ ? session_->droppedRecords() : lastDropped_;
        s.commandLine = who_.commandLine;
        s.streaming = session_ != nullptr;
        s.job = settings_.job;
        s.runId = settings_.runId;
    }
    s.telemetry = telemetry_ != nullptr;
    // The control thread asks this while another may be creating the pipeline.
    if (const live::LivePipeline* live = liveView_.load(std::memory_order_acquire)) {
        const auto sight = live->sight();
        s.sawSteps = sight.sawSteps;
        s.step = sight.newestStep;
        s.firstWholeStep = sight.firstWholeStep;
        s.lastClosedStep = sight.lastClosedStep;
        s.stepSeconds = sight.lastStepSeconds;
        s.rowsSeen = sight.rowsSeen;
        s.lookbackFirst = sight.lookbackFirst;
        s.lookbackLast = sight.lookbackLast;
        s.lookbackSteps = static_cast<int>(settings_.lookback());
        if (const auto p = live->captureProgress()) {
            control::StepCaptureStatus c;
            c.state = p->state;
            c.requested = p->requested;
            c.written = p->written;
            c.first = p->first;
            c.atStep = p->atStep;
            c.path = p->path;
            c.error = p->error;
            s.stepCapture = std::move(c);
        }
    }
    return s;
}

AgentState Agent::state() const {
    std::lock_guard lock(stateMutex_);
    return state_;
}

void Agent::submitCollective(PendingCollective&& collective) {
    std::lock_guard lock(stateMutex_);
    if (session_) session_->submitCollective(std::move(collective));
}

void Agent::setNcclPlugin(OpenCollectives openCollectives, std::function<IgnoredCalls()> ignoredCalls) {
    std::lock_guard lock(stateMutex_);
    openCollectives_ = std::move(openCollectives);
    ncclIgnored_ = std::move(ignoredCalls);
}

IgnoredCalls Agent::ignoredCalls() const {
    std::function<IgnoredCalls()> nccl;
    IgnoredCalls all;
    {
        std::lock_guard lock(stateMutex_);
        nccl = ncclIgnored_;
        all[IgnoredReason::SourceStopGaveUp] = sourceGaveUps_;
    }
    if (nccl) all += nccl();
    all += pool_.ignored();
    return all;
}

const std::string& Agent::controlSocketPath() const { return socketPath_; }

int Agent::metricsPort() const { return publisher_ ? publisher_->httpPort() : 0; }

}  // namespace osc::agent

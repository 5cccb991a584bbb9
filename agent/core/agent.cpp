#include "agent/core/agent.h"

#include "agent/core/control_server.h"
#include "agent/core/partial_writer.h"
#include "agent/core/signal_bridge.h"
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
      source_(std::move(source)),
      pool_(settings_.bufferBytes, activityBufferBytes(settings_.bufferBytes)) {}

Agent::~Agent() { shutdown(CaptureEnd::ProcessExit); }

void Agent::boot() {
    if (settings_.partial) partials_ = std::make_unique<PartialWriter>(settings_.partialSettings);
    signals_ = std::make_unique<SignalBridge>([this](int) {
        std::string ignored;
        stopCapture(CaptureEnd::Signal, ignored);
    });
    {
        std::lock_guard lock(stateMutex_);
        if (!settings_.dormant) {
            if (settings_.delayS > 0) startAt_ = after(settings_.delayS);
            if (settings_.durationS > 0) scheduledDurationS_ = settings_.durationS;
        }
    }
    timer_ = startBackgroundThread([this] { timerLoop(); });
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
        if (state_ == AgentState::Capturing) {
            error = "a capture is already running (" + session_->path() + ")";
            return false;
        }
        sequence = captures_ + 1;
        openCollectives = openCollectives_;
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
    switch (session->start(error)) {
        case CaptureSession::Start::Started:
            break;
        case CaptureSession::Start::FileFailed:
            return false;  // another output may work
        case CaptureSession::Start::SourceFailed:
            // The source cannot run in this process at all (no driver, CUPTI taken).
            disable(error);
            return false;
    }
    {
        std::lock_guard lock(stateMutex_);
        session_ = std::move(session);
        state_ = AgentState::Capturing;
        ++captures_;
        lastOutput_ = session_->path();
        stopAt_.reset();
        if (durationS && *durationS > 0) stopAt_ = after(*durationS);
    }
    timerCv_.notify_all();
    return true;
}

bool Agent::stopCapture(CaptureEnd how, std::string& error) {
    std::lock_guard op(opMutex_);
    std::unique_ptr<CaptureSession> session;
    {
        std::lock_guard lock(stateMutex_);
        if (state_ != AgentState::Capturing) {
            error = "no capture is running";
            return false;
        }
        session = std::move(session_);  // NCCL threads now see no session
        stopAt_.reset();
    }
    session->stop(how);
    {
        std::lock_guard lock(stateMutex_);
        lastOutput_ = session->path();
        lastDropped_ = session->droppedRecords();
        state_ = AgentState::Stopped;
    }
    if (partials_) partials_->submit(session->path());
    return true;
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
    if (control_) control_->stop();
    std::string ignored;
    stopCapture(how, ignored);
    if (partials_) partials_->finish();  // the last capture's partial, then the thread ends
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
        } else {
            auto next = std::chrono::steady_clock::time_point::max();
            if (startAt_) next = std::min(next, *startAt_);
            if (stopAt_) next = std::min(next, *stopAt_);
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
            reply.ok = startCapture(request.durationS, request.outputDir, reply.error);
            break;
        case control::ControlCommand::Stop:
            reply.ok = stopCapture(CaptureEnd::Stopped, reply.error);
            break;
    }
    reply.status = status();
    return reply;
}

control::AgentStatus Agent::status() const {
    std::lock_guard lock(stateMutex_);
    control::AgentStatus s;
    s.pid = who_.pid;
    s.rank = who_.rank;
    s.host = who_.host;
    s.state = stateName(state_);
    s.output = session_ ? session_->path() : lastOutput_;
    s.captures = captures_;
    s.dropped = session_ ? session_->droppedRecords() : lastDropped_;
    s.commandLine = who_.commandLine;
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

void Agent::setOpenCollectives(OpenCollectives source) {
    std::lock_guard lock(stateMutex_);
    openCollectives_ = std::move(source);
}

const std::string& Agent::controlSocketPath() const { return socketPath_; }

}  // namespace osc::agent

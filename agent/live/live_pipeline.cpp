#include "agent/live/live_pipeline.h"

#include "agent/live/clocks.h"

#include <fcntl.h>
#include <unistd.h>
#include <cinttypes>
#include <ctime>
#include <stdexcept>

namespace osc::agent::live {
namespace {

std::regex stepRegex(const std::string& pattern) {
    try {
        return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw std::invalid_argument("invalid step pattern '" + pattern + "': " + e.what());
    }
}

}  // namespace

LivePipeline::LivePipeline(LiveSettings settings, ProcessIdentity who, Telemetry* telemetry, Hooks hooks)
    : settings_(std::move(settings)),
      who_(std::move(who)),
      telemetry_(telemetry),
      hooks_(std::move(hooks)),
      assembler_(stepRegex(settings_.analysis.stepPattern), settings_.limits) {
    if (settings_.condition)
        watch_ = std::make_unique<ConditionWatch>(*settings_.condition,
                                                  static_cast<int64_t>(settings_.conditionCooldownS * 1e9));
    if (!settings_.stepLogPath.empty()) {
        const int fd =
            ::open(settings_.stepLogPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) stepLog_ = ::fdopen(fd, "a");
        if (!stepLog_)
            std::fprintf(stderr, "overlapscope-agent: %s: cannot open the step log\n", settings_.stepLogPath.c_str());
    }
}

LivePipeline::~LivePipeline() {
    if (stepLog_) std::fclose(stepLog_);
}

void LivePipeline::streamStarted(const DecodeContext& context, const std::map<std::string, std::string>& sourceMeta) {
    std::lock_guard lock(mutex_);
    stream_ = context;
    sourceMeta_ = sourceMeta;
    assembler_.clear();
    // Steps only move forward in a job: the last one measured stays known
    // across streams (a step capture then refuses a step that has passed).
    const int64_t lastClosed = sight_.lastClosedStep;
    sight_ = Sight{};
    sight_.streaming = true;
    sight_.lastClosedStep = lastClosed;
    publishView();
}

void LivePipeline::cycleEnded(uint64_t droppedRecords) {
    std::lock_guard lock(mutex_);
    assembler_.advance(steadyNowNs(), [this](const ClosedStep& s) { onStep(s); });
    publishHealth(droppedRecords);
    publishView();
}

void LivePipeline::streamEnded(CaptureEnd how, uint64_t droppedRecords) {
    std::lock_guard lock(mutex_);
    assembler_.finish([this](const ClosedStep& s) { onStep(s); });
    if (capture_) {
        capture_->end(how, how == CaptureEnd::Stopped ? "the agent's record stream stopped" : "the process exited");
        finishCapture();
    }
    sight_.streaming = false;
    publishHealth(droppedRecords);
    publishView();
}

void LivePipeline::publishView() {
    std::lock_guard view(viewMutex_);
    sightView_ = sight_;
    activeView_ = capture_ != nullptr;
    progressView_ = capture_ ? std::optional<StepCaptureProgress>(capture_->progress()) : lastProgress_;
}

void LivePipeline::publishHealth(uint64_t droppedRecords) {
    const auto& c = assembler_.counters();
    sight_.sawSteps = assembler_.sawSteps();
    sight_.newestStep = assembler_.newestStep();
    sight_.firstWholeStep = assembler_.firstWholeStep();
    sight_.rowsSeen = assembler_.rowsSeen();
    sight_.stepsClosed = c.stepsClosed;
    if (!telemetry_) return;
    AgentHealth h;
    h.streaming = sight_.streaming;
    h.droppedRecords = droppedRecords;
    h.lateRows = c.rowsLate;
    h.rowsDropped = c.rowsDropped;
    h.heldRows = assembler_.heldRows();
    h.openSteps = assembler_.openSteps();
    h.stepCaptures = stepCaptures_;
    h.conditionCaptures = conditionCaptures_;
    telemetry_->setHealth(h);
}

void LivePipeline::onStep(const ClosedStep& step) {
    std::vector<DeviceStepMetrics> metrics;
    if (!metricsBroken_) {
        try {
            metrics = measureStep(step, settings_.analysis);
        } catch (const std::exception& e) {
            // A bad --comm-kernel pattern, say: said once, and no metrics after.
            std::fprintf(stderr, "overlapscope-agent: live metrics: %s; turned off\n", e.what());
            metricsBroken_ = true;
        }
    }
    for (const auto& m : metrics) {
        if (telemetry_) telemetry_->record(m);
        logStep(m);
        sight_.lastStepSeconds = m.metrics.window_ns / 1e9;
    }
    sight_.lastClosedStep = step.number;
    if (capture_) {
        if (capture_->offer(step, assembler_)) finishCapture();
        publishView();
        return;
    }
    if (!watch_ || !watch_->observe(metrics, steadyNowNs(), fileCapture_.load())) return;
    StepCapturePlan plan;
    plan.steps = settings_.conditionSteps;
    plan.notBefore = step.slotEnd;  // the steps after the one that made it hold
    plan.partial = settings_.conditionPartial;
    plan.trigger = "capture-when";
    plan.path = hooks_.capturePath ? hooks_.capturePath(settings_.conditionOutputDir) : std::string();
    if (plan.path.empty()) return;
    std::fprintf(stderr,
                 "overlapscope-agent: --capture-when held for %d steps (to step %" PRId64
                 "): capturing %d steps to %s\n",
                 settings_.condition->steps, step.number, plan.steps, plan.path.c_str());
    capture_ = std::make_unique<StepCapture>(std::move(plan), who_, stream_, sourceMeta_);
    lastProgress_ = capture_->progress();
    ++conditionCaptures_;
    publishView();
}

void LivePipeline::finishCapture() {
    const StepCaptureProgress progress = capture_->progress();
    const bool partial = capture_->plan().partial;
    lastProgress_ = progress;
    if (progress.written > 0) ++stepCaptures_;
    capture_.reset();
    publishView();  // before the hook: the agent asks captureActive() when it hears of it
    if (hooks_.captureEnded) hooks_.captureEnded(progress, partial);
}

void LivePipeline::logStep(const DeviceStepMetrics& m) {
    if (!stepLog_) return;
    const OverlapMetrics& o = m.metrics;
    std::fprintf(stepLog_,
                 "{\"step\":%" PRId64 ",\"device\":%u,\"complete\":%s,\"window_ns\":%" PRId64 ",\"compute_ns\":%" PRId64
                 ",\"comm_ns\":%" PRId64 ",\"overlap_ns\":%" PRId64 ",\"exposed_comm_ns\":%" PRId64
                 ",\"idle_ns\":%" PRId64 ",\"wait_ns\":%" PRId64 ",\"bytes\":%" PRIu64
                 ",\"bus_bytes\":%.17g"
                 ",\"transfer_ns\":%" PRId64 "}\n",
                 m.number, m.device, m.complete ? "true" : "false", o.window_ns, o.compute_ns, o.comm_ns, o.overlap_ns,
                 o.exposed_comm_ns, o.idle_ns, m.wait ? m.wait->comm_wait_ns : int64_t{-1}, m.bytes, m.busBytes,
                 m.transferNs);
    std::fflush(stepLog_);
}

bool LivePipeline::arm(StepCapturePlan plan, std::string& error) {
    std::lock_guard lock(mutex_);
    if (!sight_.streaming) {
        error = "the agent is not recording";
        return false;
    }
    if (capture_) {
        error = "a step capture is already in progress (" + capture_->progress().path + ")";
        return false;
    }
    if (plan.atStep && sight_.lastClosedStep >= *plan.atStep) {
        error = "step " + std::to_string(*plan.atStep) + " has passed here (the last closed step is " +
                std::to_string(sight_.lastClosedStep) + "); choose a later --at-step";
        return false;
    }
    plan.notBefore = wallNowNs() - stream_.originUtcNs;
    capture_ = std::make_unique<StepCapture>(std::move(plan), who_, stream_, sourceMeta_);
    lastProgress_ = capture_->progress();
    publishView();
    return true;
}

bool LivePipeline::cancel(std::string& error) {
    std::lock_guard lock(mutex_);
    if (!capture_) {
        error = "no step capture is in progress";
        return false;
    }
    capture_->end(CaptureEnd::Stopped, "stopped by request");
    finishCapture();
    publishView();
    return true;
}

std::optional<StepCaptureProgress> LivePipeline::captureProgress() const {
    std::lock_guard lock(viewMutex_);
    return progressView_;
}

bool LivePipeline::captureActive() const {
    std::lock_guard lock(viewMutex_);
    return activeView_;
}

LivePipeline::Sight LivePipeline::sight() const {
    std::lock_guard lock(viewMutex_);
    return sightView_;
}

}  // namespace osc::agent::live

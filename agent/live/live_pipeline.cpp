#include "agent/live/live_pipeline.h"

#include "agent/live/clocks.h"

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <ctime>
#include <deque>
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
      assembler_(stepRegex(settings_.analysis.stepPattern), settings_.limits),
      ring_(settings_.lookbackSteps, settings_.lookbackMaxRows) {
    // The ring's records name the assembler's rows, which it then retains.
    assembler_.setRetaining(settings_.lookbackSteps > 0);
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
    // A new stream has a new time origin: the steps held before are on the old one.
    ring_.clear();
    lastWindowEnd_.clear();
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
    releaseRetained();
    if (ownRequested_) {
        // The control thread reads the ring: its records take their rows.
        while (ownOldestRecord()) {}
        releaseRetained();
        ownRequested_ = false;
        ringOwned_.notify_all();
    }
    cancelWithTail();
    if (descriptionsVersion_ != assembler_.descriptionsVersion()) {
        descriptionsVersion_ = assembler_.descriptionsVersion();
        descriptions_ = DescriptionRows{};
        assembler_.writeDescriptions(descriptions_);
    }
    publishHealth(droppedRecords);
    publishView();
}

void LivePipeline::streamEnded(CaptureEnd how, uint64_t droppedRecords) {
    std::lock_guard lock(mutex_);
    cancelWithTail();  // before finish() lets the rows go
    // The ring's steps stay for `dump` after the stream: they take their rows.
    assembler_.finish([this](const ClosedStep& s) { onStep(s); },
                      [this] {
                          while (ownOldestRecord()) {}
                      });
    if (capture_) {
        capture_->end(how, how == CaptureEnd::Stopped ? "the agent's record stream stopped" : "the process exited");
        finishCapture();
    }
    sight_.streaming = false;
    ownRequested_ = false;  // finish() gave the ring's records their rows
    ringOwned_.notify_all();
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
    sight_.lookbackFirst = ring_.steps().empty() ? -1 : ring_.steps().front().number;
    sight_.lookbackLast = ring_.steps().empty() ? -1 : ring_.steps().back().number;
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
    h.lookbackSteps = ring_.steps().size();
    h.lookbackRows = ring_.rows();
    h.lookbackBytes = ring_.bytes() + assembler_.retainedBytes();
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
    noteIdleBetweenSteps(metrics);
    for (const auto& m : metrics) {
        if (telemetry_) telemetry_->record(m);
        logStep(m);
        sight_.lastStepSeconds = m.metrics.window_ns / 1e9;
    }
    sight_.lastClosedStep = step.number;
    // Its rows are kept when the ring keeps steps or a capture writes this one.
    if (ring_.capacity() > 0 || capture_) {
        step.recordRows(ring_.next());
        const StepRows& kept = ring_.keep();
        if (capture_) {
            assembler_.materialize(kept, recorded_);
            const auto describe = [this](RowSink& out) { assembler_.writeDescriptions(out); };
            if (capture_->offer(recorded_, describe)) finishCapture();
        }
        releaseRetained();
    }
    if (capture_) {
        publishView();
        return;
    }
    if (!watch_ || !watch_->observe(metrics, steadyNowNs(), fileCapture_.load())) return;
    startConditionCapture(step);
}

void LivePipeline::startConditionCapture(const ClosedStep& step) {
    // The steps the ring holds, the one that made the condition hold last
    // among them, and the next --capture-steps.
    const size_t held = ring_.steps().size();
    StepCapturePlan plan;
    plan.steps = settings_.conditionSteps + static_cast<int>(held);
    plan.notBefore = held > 0 ? ring_.steps().front().rangeStart : step.slotEnd;
    plan.partial = settings_.conditionPartial;
    plan.trigger = "capture-when";
    plan.path = hooks_.capturePath ? hooks_.capturePath(settings_.conditionOutputDir) : std::string();
    if (plan.path.empty()) return;
    const int64_t first = held > 0 ? ring_.steps().front().number : step.number + 1;
    std::fprintf(stderr,
                 "overlapscope-agent: --capture-when held for %d steps (to step %" PRId64
                 "): capturing %d steps%s to %s\n",
                 settings_.condition->steps, step.number, plan.steps, held > 0 ? " (from the look-back ring on)" : "",
                 plan.path.c_str());
    const int steps = plan.steps;
    capture_ = std::make_unique<StepCapture>(std::move(plan), who_, stream_, sourceMeta_);
    lastProgress_ = capture_->progress();
    ++conditionCaptures_;
    offerHeld(std::nullopt, [this](RowSink& out) { assembler_.writeDescriptions(out); });
    publishView();
    // The job's other ranks capture the same steps (when the steps have numbers).
    if (hooks_.triggered && step.number >= 0 && first >= 0) hooks_.triggered({first, step.number, steps});
}

void LivePipeline::releaseRetained() {
    if (ring_.capacity() == 0) return;
    // A job that goes on without closing steps (no step ranges for a long
    // while) would keep every row dropped since the oldest record: past the
    // ring's row bound, its oldest records copy their rows instead.
    const size_t bound = settings_.lookbackMaxRows + ring_.rows();
    while (assembler_.retainedRows() > bound && ownOldestRecord())
        assembler_.releaseBefore(ring_.lowest(assembler_.endSeqs()));
    assembler_.releaseBefore(ring_.lowest(assembler_.endSeqs()));
}

bool LivePipeline::ownOldestRecord() {
    return ring_.ownOldest([this](const StepRows& in, RecordedStep& out) { assembler_.materialize(in, out); });
}

void LivePipeline::offerHeld(std::optional<int64_t> atStep, const std::function<void(RowSink&)>& describe) {
    for (const StepRows& held : ring_.steps()) {
        if (!capture_) return;
        if (atStep && held.number < *atStep) continue;
        assembler_.materialize(held, recorded_);
        if (capture_->offer(recorded_, describe)) {
            finishCapture();
            return;
        }
    }
}

void LivePipeline::noteIdleBetweenSteps(std::vector<DeviceStepMetrics>& metrics) {
    for (auto& m : metrics) {
        const auto it = lastWindowEnd_.find(m.device);
        if (it != lastWindowEnd_.end()) m.idleBefore = std::max<TimeNs>(0, m.windowStart - it->second);
        TimeNs& end = lastWindowEnd_[m.device];
        end = std::max(end, m.windowEnd);
    }
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
                 ",\"transfer_ns\":%" PRId64 ",\"idle_before_ns\":%" PRId64 "}\n",
                 m.number, m.device, m.complete ? "true" : "false", o.window_ns, o.compute_ns, o.comm_ns, o.overlap_ns,
                 o.exposed_comm_ns, o.idle_ns, m.wait ? m.wait->comm_wait_ns : int64_t{-1}, m.bytes, m.busBytes,
                 m.transferNs, m.idleBefore.value_or(-1));
    std::fflush(stepLog_);
}

bool LivePipeline::ringRowsOwned(std::unique_lock<std::mutex>& lock, std::string& error) {
    // After the stream, finish() gave them their rows.
    const auto& held = ring_.steps();
    if (!sight_.streaming ||
        std::all_of(held.begin(), held.end(), [](const StepRows& s) { return s.owned != nullptr; }))
        return true;
    ownRequested_ = true;
    if (ringOwned_.wait_for(lock, std::chrono::seconds(5), [&] { return !ownRequested_ || !sight_.streaming; }))
        return true;
    error = "the agent's writer thread did not answer within 5 s";
    return false;
}

bool LivePipeline::arm(StepCapturePlan plan, std::string& error) {
    std::unique_lock lock(mutex_);
    // A step that has passed comes from the ring, whose rows only the
    // writer thread reads: it gives the records their rows first.
    if (plan.atStep && sight_.lastClosedStep >= *plan.atStep && !ringRowsOwned(lock, error)) return false;
    if (!sight_.streaming) {
        error = "the agent is not recording";
        return false;
    }
    if (capture_) {
        error = "a step capture is already in progress (" + capture_->progress().path + ")";
        return false;
    }
    // A step that closed already is taken from the ring while it holds it.
    const bool passed = plan.atStep && sight_.lastClosedStep >= *plan.atStep;
    const auto& held = ring_.steps();
    const bool inRing = plan.atStep && !held.empty() &&
                        (ring_.find(*plan.atStep) ||
                         (plan.fromOldestHeld && held.back().number >= *plan.atStep && held.front().number >= 0));
    if (passed && !inRing) {
        error = "step " + std::to_string(*plan.atStep) + " has passed here (the last closed step is " +
                std::to_string(sight_.lastClosedStep) + "; " +
                (held.empty() ? std::string("the look-back ring holds no step")
                              : "the look-back ring holds steps " + std::to_string(held.front().number) + " to " +
                                    std::to_string(held.back().number)) +
                "); choose a later --at-step";
        return false;
    }
    plan.notBefore = wallNowNs() - stream_.originUtcNs;
    const bool fromPeer = plan.fromOldestHeld;
    const std::optional<int64_t> atStep = plan.atStep;
    capture_ = std::make_unique<StepCapture>(std::move(plan), who_, stream_, sourceMeta_);
    lastProgress_ = capture_->progress();
    // The control thread: the writer adds GPUs and names to the assembler
    // without mutex_, so the file starts with those of the last cycle (the
    // ring's steps closed in earlier cycles: none of theirs is missing).
    if (passed) offerHeld(atStep, [this](RowSink& out) { descriptions_.writeTo(out); });
    // Another rank's --capture-when captured these steps: this rank's own
    // condition waits its cooldown as if it had started it.
    if (fromPeer && watch_) watch_->started(steadyNowNs());
    publishView();
    return true;
}

bool LivePipeline::dump(const std::string& path, StepCaptureProgress& written, std::string& error) {
    std::deque<RecordedStep> steps;
    DescriptionRows descriptions;
    DecodeContext stream;
    std::map<std::string, std::string> sourceMeta;
    {
        std::unique_lock lock(mutex_);
        if (ring_.capacity() == 0) {
            error = "this agent keeps no look-back ring (run --lookback K)";
            return false;
        }
        // The records' rows are the writer thread's until it copies them.
        if (!ringRowsOwned(lock, error)) return false;
        if (ring_.steps().empty()) {
            error = sight_.streaming ? "the look-back ring holds no step yet" : "the agent is not recording";
            return false;
        }
        // A copy, written without holding up the writer thread.
        for (const StepRows& held : ring_.steps()) assembler_.materialize(held, steps.emplace_back());
        descriptions = descriptions_;
        stream = stream_;
        sourceMeta = sourceMeta_;
    }
    StepCapturePlan plan;
    plan.steps = static_cast<int>(steps.size());
    plan.notBefore = INT64_MIN;
    plan.path = path;
    plan.trigger = "dump";
    StepCapture capture(std::move(plan), who_, stream, std::move(sourceMeta));
    const auto describe = [&](RowSink& out) { descriptions.writeTo(out); };
    for (const RecordedStep& s : steps)
        if (capture.offer(s, describe)) break;
    written = capture.progress();
    if (written.state != "done") {
        error = written.error.empty() ? "the look-back ring's steps were not written" : written.error;
        return false;
    }
    return true;
}

bool LivePipeline::cancel(std::string& error, std::vector<PendingCollective> open) {
    std::unique_lock lock(mutex_);
    if (!capture_) {
        error = "no step capture is in progress";
        return false;
    }
    if (sight_.streaming) {
        cancel_ = std::move(open);
        // The writer thread ends it at its next cycle; a stream that has
        // stalled (its thread stuck) must not keep `detach` waiting long.
        if (cancelled_.wait_for(lock, std::chrono::seconds(5), [&] { return !cancel_ || !capture_; })) return true;
        cancel_.reset();
    }
    capture_->end(CaptureEnd::Stopped, "stopped by request");
    finishCapture();
    publishView();
    return true;
}

void LivePipeline::cancelWithTail() {
    if (!cancel_) return;
    std::vector<PendingCollective> open = std::move(*cancel_);
    cancel_.reset();
    if (capture_) {
        const TimeNs from = capture_->firstRangeStart();
        capture_->end(CaptureEnd::Stopped, "stopped by request", [&](RowSink& out) {
            assembler_.writeTail(from, out);
            // Plugin times are wall-clock ns; the stream's are since its time 0.
            for (const PendingCollective& c : open) out.addCollective(c.rowFrom(stream_.originUtcNs));
        });
        finishCapture();
    }
    cancelled_.notify_all();
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

// The Agent's live half (agent.h): live metrics from boot and who publishes
// them, --capture-when's triggers to the job's other ranks, step captures and
// the look-back ring's dump. The capture lifecycle is agent.cpp.
#include "agent/core/agent.h"

#include "agent/core/partial_writer.h"
#include "agent/core/signal_bridge.h"
#include "agent/live/live_pipeline.h"
#include "agent/live/metrics_file.h"
#include "agent/live/metrics_publisher.h"
#include "agent/live/prometheus_text.h"
#include "agent/live/telemetry.h"
#include "agent/live/trigger_relay.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace osc::agent {
namespace {

// The live endpoint's series of refused calls: one counter, a sample per reason.
std::string ignoredCallsText(const IgnoredCalls& ignored, const live::Labels& process) {
    live::PrometheusText out;
    out.family("overlapscope_agent_ignored_calls_total", "counter",
               "Calls from NCCL or CUPTI naming a handle, context or buffer the agent did not give out or no "
               "longer holds, counted and ignored (docs/agent.md, What the agent trusts)");
    for (size_t i = 0; i < kIgnoredReasons; ++i) {
        const auto reason = static_cast<IgnoredReason>(i);
        live::Labels labels = process;
        labels.emplace_back("reason", std::string(ignoredReasonName(reason)));
        out.sample(labels, static_cast<double>(ignored[reason]));
    }
    return out.text();
}

}  // namespace

// What publishes the telemetry: the file, and HTTP on PORT + local rank
// (never past 65535: such a rank says so and serves none).
live::MetricsPublisher::Options Agent::publisherOptions(std::string& problem) const {
    live::MetricsPublisher::Options p;
    p.periodMs = settings_.metricsPeriodMs;
    if (!settings_.metricsFile.empty()) p.filePath = live::metricsFilePath(settings_.metricsFile, who_);
    if (settings_.metricsPort < 0) return p;
    const int local = std::max(who_.localRank, 0);
    if (settings_.metricsPort > 0 && settings_.metricsPort + local > 65535) {
        problem = "--metrics-port " + std::to_string(settings_.metricsPort) + " + local rank " + std::to_string(local) +
                  " is past 65535: no /metrics for this rank (choose a lower port)";
        return p;
    }
    live::MetricsHttpServer::Options http;
    http.address = settings_.metricsAddress;
    // Every rank of a node gets its own port: PORT + local rank.
    http.port = settings_.metricsPort == 0 ? 0 : settings_.metricsPort + local;
    p.http = http;
    return p;
}

// Live metrics from boot: the telemetry, who publishes it, and the stream.
void Agent::bootLive() {
    if (!settings_.alwaysOn()) return;
    live::TelemetryIdentity id{who_.rank >= 0 ? std::to_string(who_.rank) : std::string(), who_.host, settings_.job};
    const live::Labels process = {{"rank", id.rank}, {"host", id.host}, {"job", id.job}};
    telemetry_ = std::make_unique<live::Telemetry>(std::move(id));
    std::string error;
    if (!ensureLive(error)) {
        std::fprintf(stderr, "overlapscope-agent: %s: no live metrics\n", error.c_str());
        telemetry_.reset();
        return;
    }
    std::string problem;
    live::MetricsPublisher::Options p = publisherOptions(problem);
    live::MetricsEndpoint endpoint;
    endpoint.wanted = settings_.metricsPort >= 0;
    const std::string who = who_.rank >= 0 ? "rank " + std::to_string(who_.rank) : "pid " + std::to_string(who_.pid);
    if (!problem.empty()) std::fprintf(stderr, "overlapscope-agent: %s: %s\n", who.c_str(), problem.c_str());
    // A job ended by SIGTERM or SIGINT still removes its metrics file.
    if (signals_ && !p.filePath.empty()) signals_->install();
    if (!p.filePath.empty()) live::removeStaleMetricsFiles(settings_.metricsFile, who_);
    telemetry_->setEndpoint(endpoint);
    p.httpReady = [telemetry = telemetry_.get(), endpoint](int port) mutable {
        endpoint.port = port;
        endpoint.up = port > 0;
        telemetry->setEndpoint(endpoint);
    };
    if (!p.filePath.empty() || p.http) {
        live::Telemetry* telemetry = telemetry_.get();
        publisher_ = std::make_unique<live::MetricsPublisher>(p, [this, telemetry, process] {
            timespec ts{};
            ::clock_gettime(CLOCK_REALTIME, &ts);
            return telemetry->prometheusText(static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9) +
                   ignoredCallsText(ignoredCalls(), process);
        });
        error.clear();
        publisher_->start(error);
        if (!error.empty())
            std::fprintf(stderr, "overlapscope-agent: %s: %s%s\n", who.c_str(), error.c_str(),
                         p.filePath.empty() ? "" : "; the metrics file goes on");
        if (const int port = publisher_->httpPort(); port > 0)
            std::fprintf(stderr, "overlapscope-agent: %s: metrics on http://%s%s%s:%d/metrics\n", who.c_str(),
                         p.http->address.find(':') != std::string::npos ? "[" : "", p.http->address.c_str(),
                         p.http->address.find(':') != std::string::npos ? "]" : "", port);
    }
    bootTriggers();
    std::lock_guard op(opMutex_);
    if (!startStreamLocked(error) && state_ != AgentState::Disabled)
        std::fprintf(stderr, "overlapscope-agent: live metrics: %s\n", error.c_str());
}

// --capture-when tells the job's other ranks; --trigger-dir hears other nodes'.
void Agent::bootTriggers() {
    if (settings_.captureWhen.empty() && settings_.triggerDir.empty()) return;
    live::TriggerRelay::Options o;
    o.socketDir = settings_.socketDir;
    o.pid = who_.pid;
    o.host = who_.host;
    o.rank = who_.rank;
    o.job = settings_.job;
    o.runId = settings_.runId;
    o.triggerDir = settings_.triggerDir;
    if (!o.triggerDir.empty() && o.job.empty())
        std::fprintf(stderr,
                     "overlapscope-agent: --trigger-dir without a job name (--job, $SLURM_JOB_ID): triggers reach "
                     "only the ranks of this `overlapscope run`\n");
    triggers_ = std::make_unique<live::TriggerRelay>(o, [this](int64_t first, int steps, const std::string& trigger) {
        std::string error;
        if (!startStepCapture(steps, first, std::nullopt, settings_.partial, trigger, error) && !error.empty())
            std::fprintf(stderr, "overlapscope-agent: %s: %s\n", trigger.c_str(), error.c_str());
    });
    triggers_->start();
}

bool Agent::ensureLive(std::string& error) {
    if (live_) return true;
    if (!settings_.analysisValid) {
        error = "the step pattern or a communication kernel pattern is not a regular expression";
        return false;
    }
    live::LiveSettings ls;
    ls.analysis = settings_.analysis;
    ls.limits.maxRows = settings_.liveMaxRows;
    ls.conditionSteps = settings_.captureSteps;
    ls.conditionCooldownS = settings_.captureCooldownS;
    ls.conditionOutputDir = settings_.outputDir;
    ls.conditionPartial = settings_.partial;
    ls.stepLogPath = settings_.stepLog;
    ls.lookbackSteps = settings_.lookback();
    ls.lookbackMaxRows = settings_.lookbackMaxRows;
    try {
        if (!settings_.captureWhen.empty()) ls.condition = live::parseCaptureCondition(settings_.captureWhen);
        live::LivePipeline::Hooks hooks;
        hooks.capturePath = [this](const std::string& dir) { return nextCapturePath(dir); };
        hooks.captureEnded = [this](const live::StepCaptureProgress& p, bool partial) { stepCaptureEnded(p, partial); };
        hooks.triggered = [this](const live::CaptureTrigger& t) {
            if (triggers_) triggers_->announce(t);
        };
        live_ = std::make_unique<live::LivePipeline>(std::move(ls), who_, telemetry_.get(), std::move(hooks));
        liveView_.store(live_.get(), std::memory_order_release);
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
    return true;
}

// Writer thread, under the pipeline's lock: queue and wake, nothing more.
void Agent::stepCaptureEnded(const live::StepCaptureProgress& progress, bool partial) {
    if (partial && progress.written > 0 && settings_.analysisValid) partials().submit(progress.path);
    {
        std::lock_guard lock(stateMutex_);
        if (!progress.path.empty()) lastOutput_ = progress.path;
        stepCaptureEnded_ = true;
    }
    timerCv_.notify_all();
}

bool Agent::startStepCapture(int64_t steps, std::optional<int64_t> atStep, std::optional<std::string> outputDir,
                             bool partial, const std::string& trigger, std::string& error) {
    std::lock_guard op(opMutex_);
    {
        std::lock_guard lock(stateMutex_);
        if (session_ && !streamOnly_) {
            error = "a capture is already running (" + session_->path() + ")";
            return false;
        }
        // A trigger reaches a node's ranks twice (its socket, the trigger directory).
        if (!trigger.empty()) {
            if (std::find(servedTriggers_.begin(), servedTriggers_.end(), trigger) != servedTriggers_.end())
                return true;
            servedTriggers_.push_back(trigger);
            if (servedTriggers_.size() > 16) servedTriggers_.pop_front();
        }
    }
    if (!ensureLive(error)) return false;
    if (signals_) signals_->install();
    if (!startStreamLocked(error)) return false;
    live::StepCapturePlan plan;
    plan.steps = static_cast<int>(steps);
    plan.atStep = atStep;
    plan.partial = partial || settings_.partial;
    plan.trigger = trigger.empty() ? "attach" : trigger;
    plan.fromOldestHeld = !trigger.empty();
    plan.path = nextCapturePath(outputDir.value_or(settings_.outputDir));
    if (!live_->arm(std::move(plan), error)) {
        settleStreamLocked();
        return false;
    }
    {
        std::lock_guard lock(stateMutex_);
        state_ = AgentState::Capturing;
        watchUntil_.reset();  // the capture holds the stream now, and lets it go when done
    }
    return true;
}

bool Agent::dump(std::optional<std::string> outputDir, Dumped& dumped, std::string& error) {
    live::LivePipeline* live = liveView_.load(std::memory_order_acquire);
    if (!live) {
        error = "this agent keeps no look-back ring: it does not record (run --lookback K, or live metrics)";
        return false;
    }
    live::StepCaptureProgress written;
    const std::string target = nextCapturePath(outputDir.value_or(settings_.outputDir));
    if (!live->dump(target, written, error)) return false;
    dumped.path = written.path;
    dumped.first = written.first;
    dumped.last = written.last;
    {
        std::lock_guard lock(stateMutex_);
        lastOutput_ = dumped.path;
    }
    if (settings_.partial && settings_.analysisValid) partials().submit(dumped.path);
    return true;
}

}  // namespace osc::agent

// The capture lifecycle of one process: dormant -> capturing -> stopped,
// any number of times, each capture its own file. Starts and stops come from
// the settings (delay, duration), the control socket, signals and exit.
//
// Besides captures there is the record stream without a file (agent/live):
// it runs from boot when live metrics are on (--metrics-file, --metrics-port,
// --capture-when), for a step capture (`attach --steps`), and for a while
// after `watch`; whatever needs it no more, it stops, and CUPTI is free
// again. A wall-clock capture takes the stream's place while it runs (the
// live pipeline rides on it), and the stream comes back after.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/agent_settings.h"
#include "agent/core/buffer_pool.h"
#include "agent/core/capture_session.h"
#include "agent/core/ignored_calls.h"
#include "agent/core/process_identity.h"
#include "agent/live/metrics_publisher.h"
#include "control/control_protocol.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace osc::agent {

namespace live {
class LivePipeline;
class MetricsPublisher;
class Telemetry;
class TriggerRelay;
struct StepCaptureProgress;
}  // namespace live

class ControlServer;
class PartialWriter;
class SignalBridge;

enum class AgentState { Dormant, Capturing, Stopped, Disabled };
const char* stateName(AgentState state);

class Agent {
public:
    Agent(AgentSettings settings, ProcessIdentity who, std::unique_ptr<ActivitySource> source);
    ~Agent();
    Agent(const Agent&) = delete;
    Agent& operator=(const Agent&) = delete;

    // Opens the control socket, starts the live metrics (when asked) and
    // schedules the first capture (unless dormant).
    void boot();

    bool startCapture(std::optional<double> durationS, std::optional<std::string> outputDir, std::string& error);
    // A capture of `steps` whole steps (from step `atStep`, else the next;
    // a step that closed already from the look-back ring). `trigger` names
    // another rank's --capture-when that asked (docs/agent.md "Look-back"):
    // such a capture starts from the oldest step the ring holds when
    // `atStep` has left it, and the same trigger is served once.
    bool startStepCapture(int64_t steps, std::optional<int64_t> atStep, std::optional<std::string> outputDir,
                          bool partial, const std::string& trigger, std::string& error);
    // Writes the look-back ring's steps to a new capture now: its path and
    // the first and last step written.
    struct Dumped {
        std::string path;
        int64_t first = -1, last = -1;
    };
    bool dump(std::optional<std::string> outputDir, Dumped& dumped, std::string& error);
    // Records without a file for `seconds`, so that the steps become known.
    bool watch(double seconds, std::string& error);
    bool stopCapture(CaptureEnd how, std::string& error);
    // At exit: closes the capture and stops every agent thread.
    void shutdown(CaptureEnd how);

    control::ControlReply handle(const control::ControlRequest& request);
    control::AgentStatus status() const;
    AgentState state() const;

    // From the NCCL plugin's threads; dropped when no capture is running.
    void submitCollective(PendingCollective&& collective);
    // The NCCL plugin's operations still running (each capture writes them
    // when it closes: SessionConfig::openCollectives), and the calls it
    // refused so far.
    void setNcclPlugin(OpenCollectives openCollectives, std::function<IgnoredCalls()> ignoredCalls);
    // Every call refused so far in this process: the NCCL plugin's, the
    // buffer pool's, and the sources given up on at a stop.
    IgnoredCalls ignoredCalls() const;

    const std::string& controlSocketPath() const;
    // The HTTP port live metrics are served on (0 when none).
    int metricsPort() const;

private:
    void timerLoop();
    void disable(const std::string& why);
    void bootLive();
    void bootTriggers();
    live::MetricsPublisher::Options publisherOptions(std::string& problem) const;
    bool ensureLive(std::string& error);
    // With opMutex_ held: the stream without a file, and stopping whatever runs.
    bool startStreamLocked(std::string& error);
    void stopSessionLocked(CaptureEnd how);
    bool streamWantedLocked() const;  // live metrics, a step capture or a watch
    void settleStreamLocked();        // stops the stream when nothing wants it
    std::string nextCapturePath(const std::string& dir);
    void stepCaptureEnded(const live::StepCaptureProgress& progress, bool partial);
    PartialWriter& partials();

    const AgentSettings settings_;
    const ProcessIdentity who_;
    // Before the source: CUPTI may hand buffers back to the pool until the
    // source is gone.
    BufferPool pool_;
    std::unique_ptr<ActivitySource> source_;

    // Lock order: opMutex_, then the live pipeline's, then stateMutex_.
    std::mutex opMutex_;  // serialises start/stop, which can take a second
    mutable std::mutex stateMutex_;
    std::condition_variable timerCv_;
    AgentState state_ = AgentState::Dormant;
    std::unique_ptr<CaptureSession> session_;
    bool streamOnly_ = false;  // session_ has no file
    OpenCollectives openCollectives_;
    std::function<IgnoredCalls()> ncclIgnored_;
    uint64_t sourceGaveUps_ = 0;
    std::string lastOutput_;
    uint64_t lastDropped_ = 0;
    uint64_t captures_ = 0;
    bool shuttingDown_ = false;
    bool stepCaptureEnded_ = false;  // the timer thread settles the stream
    std::optional<std::chrono::steady_clock::time_point> startAt_, stopAt_, watchUntil_;
    std::optional<double> scheduledDurationS_;

    std::thread timer_;
    std::unique_ptr<ControlServer> control_;
    std::unique_ptr<SignalBridge> signals_;
    std::unique_ptr<PartialWriter> partials_;  // with OVERLAPSCOPE_PARTIAL or a step capture's partial
    std::mutex partialsMutex_;
    std::unique_ptr<live::Telemetry> telemetry_;
    std::unique_ptr<live::LivePipeline> live_;
    std::atomic<live::LivePipeline*> liveView_{nullptr};  // live_ for status(), from any thread
    std::unique_ptr<live::MetricsPublisher> publisher_;
    std::unique_ptr<live::TriggerRelay> triggers_;
    std::deque<std::string> servedTriggers_;  // the last triggers of other ranks served (stateMutex_)
    std::string socketPath_;
};

}  // namespace osc::agent

// The capture lifecycle of one process: dormant -> capturing -> stopped,
// any number of times, each capture its own file. Starts and stops come from
// the settings (delay, duration), the control socket, signals and exit.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/agent_settings.h"
#include "agent/core/buffer_pool.h"
#include "agent/core/capture_session.h"
#include "agent/core/process_identity.h"
#include "control/control_protocol.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace osc::agent {

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

    // Opens the control socket and schedules the first capture (unless dormant).
    void boot();

    bool startCapture(std::optional<double> durationS, std::optional<std::string> outputDir, std::string& error);
    bool stopCapture(CaptureEnd how, std::string& error);
    // At exit: closes the capture and stops every agent thread.
    void shutdown(CaptureEnd how);

    control::ControlReply handle(const control::ControlRequest& request);
    control::AgentStatus status() const;
    AgentState state() const;

    // From the NCCL plugin's threads; dropped when no capture is running.
    void submitCollective(PendingCollective&& collective);
    // The NCCL plugin's operations still running: each capture writes them
    // when it closes (SessionConfig::openCollectives).
    void setOpenCollectives(OpenCollectives source);

    const std::string& controlSocketPath() const;

private:
    void timerLoop();
    void disable(const std::string& why);

    const AgentSettings settings_;
    const ProcessIdentity who_;
    std::unique_ptr<ActivitySource> source_;
    BufferPool pool_;

    std::mutex opMutex_;  // serialises start/stop, which can take a second
    mutable std::mutex stateMutex_;
    std::condition_variable timerCv_;
    AgentState state_ = AgentState::Dormant;
    std::unique_ptr<CaptureSession> session_;
    OpenCollectives openCollectives_;
    std::string lastOutput_;
    uint64_t lastDropped_ = 0;
    uint64_t captures_ = 0;
    bool shuttingDown_ = false;
    std::optional<std::chrono::steady_clock::time_point> startAt_, stopAt_;
    std::optional<double> scheduledDurationS_;

    std::thread timer_;
    std::unique_ptr<ControlServer> control_;
    std::unique_ptr<SignalBridge> signals_;
    std::unique_ptr<PartialWriter> partials_;  // with OVERLAPSCOPE_PARTIAL
    std::string socketPath_;
};

}  // namespace osc::agent

// The agent's control protocol, shared by the agent (server) and the
// `overlapscope` command line (client).
//
// One request per connection: a single line of JSON, at most kMaxMessageBytes,
// answered by a single line of JSON. Requests:
//   {"cmd":"status"}
//   {"cmd":"start", "duration_s": 5.0, "output_dir": "/path"}   (both optional)
//   {"cmd":"start", "steps": 10, "at_step": 1200, "partial": true, "output_dir": "/path"}
//                                        (a step capture; at_step and partial optional)
//   {"cmd":"watch", "seconds": 60}       (record without a file for a while: steps become known)
//   {"cmd":"stop"}
//   {"cmd":"dump", "output_dir": "/path"} (write the look-back ring's steps now; output_dir optional)
// Any request may carry "deadline_ms": the Unix time in milliseconds after
// which its client no longer waits for the answer. An agent that reads the
// request later (it was stopped, or busy with an earlier request) drops it
// unanswered instead of acting on it. A start may carry "trigger", a short
// text saying who asked (recorded in the capture, `step_capture_trigger`).
// Every reply carries "ok" and, on failure, "error"; status fields are always
// included so one round trip serves `ps` as well as start/stop.
#pragma once

#include "control/socket_directory.h"

#include <cstdint>
#include <optional>
#include <string>

namespace osc::control {

inline constexpr size_t kMaxMessageBytes = 4096;

// Ranges both ends enforce: `overlapscope run / attach` refuse anything else
// with one line (exit 2), the agent refuses such requests and ignores such
// environment values. Past about 9.2e9 s a duration no longer fits the
// clocks' nanoseconds; these bounds stay far from that.
inline constexpr double kMaxSeconds = 1e6;                       // --delay, --duration: about 11.5 days
inline constexpr double kMinBufferMb = 1, kMaxBufferMb = 65536;  // --buffer-mb
inline constexpr int64_t kMaxSteps = 1000000;                    // attach --steps
inline constexpr int64_t kMaxStepNumber = int64_t{1} << 53;      // --at-step: exact in JSON doubles
inline constexpr size_t kMaxTriggerText = 256;                   // "trigger"
inline constexpr int kMaxLookbackSteps = 1000;                   // run --lookback

enum class ControlCommand { Status, Start, Stop, Watch, Dump };

struct ControlRequest {
    ControlCommand command = ControlCommand::Status;
    std::optional<double> durationS;  // start only; absent = until stopped
    std::optional<std::string> outputDir;
    // start only: a capture of this many whole steps (not with durationS),
    // from step number atStep or else the next step to begin, and its
    // partial result beside it.
    std::optional<int64_t> steps, atStep;
    bool partial = false;
    std::optional<double> watchS;           // watch only: how long to keep recording (0 to kMaxSeconds)
    std::optional<int64_t> deadlineUnixMs;  // when the client gives up waiting (CLOCK_REALTIME)
    std::string trigger;                    // start with steps: who asked ("" = attach)
};

// The Unix time in milliseconds (CLOCK_REALTIME), for deadlines.
int64_t unixNowMs();
// True when `request` carries a deadline that has come (this millisecond
// counts: its client may have stopped waiting in it).
bool clientGaveUp(const ControlRequest& request);

// A step capture's progress (`ps`).
struct StepCaptureStatus {
    std::string state;  // waiting, capturing, done, failed, stopped
    int64_t requested = 0, written = 0;
    int64_t first = -1;  // the first captured step's number once known
    std::optional<int64_t> atStep;
    std::string path, error;
};

// What an agent says about itself.
struct AgentStatus {
    int64_t pid = 0;
    int rank = -1;
    std::string host;
    std::string job;        // the job's name (`run --job`, else $SLURM_JOB_ID; "" none)
    std::string runId;      // the `overlapscope run` that started it ("" when none did)
    std::string state;      // "dormant", "capturing", "stopped", "disabled"
    std::string output;     // current capture file, or the last one written
    uint64_t captures = 0;  // captures started so far in this process
    uint64_t dropped = 0;   // records dropped in the current/last capture
    std::string commandLine;
    // The record stream and the steps in it (agent/live): whether the agent
    // records now (a capture, live metrics or a step capture), whether it
    // publishes live metrics, the newest step range seen, the first step it
    // holds whole since recording began, the last step measured and its GPU
    // window (-1 / 0 while unknown); whether any step range was seen, and how
    // many rows, for "this job has no step ranges".
    bool streaming = false, telemetry = false, sawSteps = false;
    int64_t step = -1, firstWholeStep = -1, lastClosedStep = -1;
    double stepSeconds = 0;
    uint64_t rowsSeen = 0;
    // The look-back ring (docs/agent.md "Look-back"): the steps it holds now
    // (-1 / -1 when none) and how many it may hold (0: none kept).
    int64_t lookbackFirst = -1, lookbackLast = -1;
    int lookbackSteps = 0;
    std::optional<StepCaptureStatus> stepCapture;
};

struct ControlReply {
    bool ok = false;
    std::string error;
    AgentStatus status;
};

std::string encodeRequest(const ControlRequest& request);
// Throws std::invalid_argument with a short reason for malformed input.
ControlRequest parseRequest(const std::string& line);

std::string encodeReply(const ControlReply& reply);
ControlReply parseReply(const std::string& line);

}  // namespace osc::control

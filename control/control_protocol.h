// The agent's control protocol, shared by the agent (server) and the
// `overlapscope` command line (client).
//
// One request per connection: a single line of JSON, at most kMaxMessageBytes,
// answered by a single line of JSON. Requests:
//   {"cmd":"status"}
//   {"cmd":"start", "duration_s": 5.0, "output_dir": "/path"}   (both optional)
//   {"cmd":"stop"}
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

enum class ControlCommand { Status, Start, Stop };

struct ControlRequest {
    ControlCommand command = ControlCommand::Status;
    std::optional<double> durationS;  // start only; absent = until stopped
    std::optional<std::string> outputDir;
};

// What an agent says about itself.
struct AgentStatus {
    int64_t pid = 0;
    int rank = -1;
    std::string host;
    std::string state;      // "dormant", "capturing", "stopped", "disabled"
    std::string output;     // current capture file, or the last one written
    uint64_t captures = 0;  // captures started so far in this process
    uint64_t dropped = 0;   // records dropped in the current/last capture
    std::string commandLine;
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

// Client side of the control protocol: talk to one agent, or find them all.
#pragma once

#include "control/control_protocol.h"

#include <string>
#include <vector>

namespace osc::agent {

// Sends one request to the agent listening at `socketPath` and returns its
// reply. Throws std::runtime_error naming the socket when the agent cannot
// be reached or answers garbage. `timeoutMs` bounds each send and receive.
ControlReply sendRequest(const std::string& socketPath, const ControlRequest& request,
                         int timeoutMs = 5000);

// Sends raw bytes and returns the raw reply line (tests of malformed input).
std::string sendRaw(const std::string& socketPath, const std::string& bytes, int timeoutMs = 5000);

struct DiscoveredAgent {
    int64_t pid = 0;
    std::string socketPath;
    ControlReply reply;  // the status reply
};

// Every live agent in `dir` (default: socketDirectory()), ordered by pid.
// Sockets whose process is gone are removed; sockets that do not answer are
// skipped.
std::vector<DiscoveredAgent> discoverAgents(const std::string& dir = socketDirectory());

}  // namespace osc::agent

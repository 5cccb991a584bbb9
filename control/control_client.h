// Client side of the control protocol: talk to one agent, or find them all.
//
// Nothing is sent to a socket unless its directory passes
// untrustedDirectoryReason() for the user and the process listening on it
// runs as the user (SO_PEERCRED): a stranger's look-alike agent never sees a
// request, an output path included. `trustedUid` is that user; the default,
// kThisUser, is the effective uid (tests pass another to play a stranger).
#pragma once

#include "control/control_protocol.h"

#include <sys/types.h>
#include <optional>
#include <string>
#include <vector>

namespace osc::control {

inline constexpr uid_t kThisUser = static_cast<uid_t>(-1);

// Sends one request to the agent listening at `socketPath` and returns its
// reply. Throws std::runtime_error naming the socket when the agent cannot
// be trusted or reached, or answers garbage. `timeoutMs` bounds the connect,
// each send and each receive.
ControlReply sendRequest(const std::string& socketPath, const ControlRequest& request, int timeoutMs = 5000,
                         uid_t trustedUid = kThisUser);

// Sends raw bytes and returns the raw reply line (tests of malformed input).
std::string sendRaw(const std::string& socketPath, const std::string& bytes, int timeoutMs = 5000,
                    uid_t trustedUid = kThisUser);

struct DiscoveredAgent {
    int64_t pid = 0;
    std::string socketPath;
    ControlReply reply;  // the status reply
};

// Every live agent in `dir` and its fallback directories
// (socketDirectoriesFor), ordered by pid. Sockets whose process is gone are
// removed; sockets that do not answer are skipped. Directories that exist but
// cannot be trusted are not read; each adds a line to `refused`.
std::vector<DiscoveredAgent> discoverAgents(const std::string& dir = socketDirectory(),
                                            std::vector<std::string>* refused = nullptr, uid_t trustedUid = kThisUser);

// The socket of the agent of process `pid` in `dir` or its fallbacks, looked
// up the same way; nullopt when there is none in a trusted directory.
std::optional<std::string> findAgentSocket(int64_t pid, const std::string& dir = socketDirectory(),
                                           std::vector<std::string>* refused = nullptr, uid_t trustedUid = kThisUser);

}  // namespace osc::control

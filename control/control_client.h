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
#include <stdexcept>
#include <string>
#include <vector>

namespace osc::control {

inline constexpr uid_t kThisUser = static_cast<uid_t>(-1);

// How long `ps`, `attach` and discovery wait for an agent's status:
// $OVERLAPSCOPE_ANSWER_TIMEOUT_MS (100 to 600,000) when set, else 2 s (or
// `fallbackMs`: `attach --steps` gives its requests 10 s).
inline constexpr int kAnswerTimeoutMs = 2000;
int answerTimeoutMs(int fallbackMs = kAnswerTimeoutMs);

// The agent accepted the connection but did not answer before the deadline
// (the process is stopped, or its control thread cannot run).
class NoAnswer : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Sends one request to the agent listening at `socketPath` and returns its
// reply. Throws std::runtime_error naming the socket when the agent cannot
// be trusted or reached, or answers garbage. `timeoutMs` bounds the whole
// exchange, and the request carries its end as its deadline (unless it has
// one already), so an agent that reads it later drops it rather than acting
// on a request nobody waits for. An agent that does not answer in time
// throws NoAnswer.
ControlReply sendRequest(const std::string& socketPath, const ControlRequest& request, int timeoutMs = 5000,
                         uid_t trustedUid = kThisUser);

// Sends raw bytes and returns the raw reply line (tests of malformed input).
std::string sendRaw(const std::string& socketPath, const std::string& bytes, int timeoutMs = 5000,
                    uid_t trustedUid = kThisUser);

struct DiscoveredAgent {
    int64_t pid = 0;
    std::string socketPath;
    ControlReply reply;  // the status reply (when answered)
    // False for a process that is alive but did not answer: `problem` says
    // why ("did not answer in 2 s (the process is stopped)"), and `reply`
    // holds what /proc tells of it (pid, rank, job, command line).
    bool answered = true;
    std::string problem;
};

// Every agent in `dir` and its fallback directories (socketDirectoriesFor)
// whose process is alive, answering or not, ordered by pid; all are asked at
// once, each for at most `timeoutMs`. Sockets whose process is gone are
// removed. Directories that exist but cannot be trusted are not read; each
// adds a line to `refused`.
// (`timeoutMs` 0: answerTimeoutMs().)
std::vector<DiscoveredAgent> surveyAgents(const std::string& dir = socketDirectory(),
                                          std::vector<std::string>* refused = nullptr, uid_t trustedUid = kThisUser,
                                          int timeoutMs = 0);
// The agents of surveyAgents that answered.
std::vector<DiscoveredAgent> discoverAgents(const std::string& dir = socketDirectory(),
                                            std::vector<std::string>* refused = nullptr, uid_t trustedUid = kThisUser);

// "did not answer in 2 s", with what /proc says of the process when it
// explains the silence ("the process is stopped (SIGSTOP or a debugger)").
std::string silenceReason(int64_t pid, int timeoutMs);

// The socket of the agent of process `pid` in `dir` or its fallbacks, looked
// up the same way; nullopt when there is none in a trusted directory.
std::optional<std::string> findAgentSocket(int64_t pid, const std::string& dir = socketDirectory(),
                                           std::vector<std::string>* refused = nullptr, uid_t trustedUid = kThisUser);

}  // namespace osc::control

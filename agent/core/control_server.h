// The agent's end of the control socket: a Unix stream socket in a private
// per-user directory. Each connection carries one request line and gets one
// reply line. The peer's uid (SO_PEERCRED) must pass `PeerCheck`; oversized
// or malformed requests get an error reply and change nothing.
//
// A request whose client gave up (its "deadline_ms" passed) before the
// agent got to it is dropped unanswered: an agent
// that was stopped acts on nothing that waited for it meanwhile.
//
// Many connections are served at once: one thread polls them all, each with
// a deadline for its request line, and answers status requests itself (from
// `StatusProvider`, which must not block), so a stuck client or a start/stop
// in progress never keeps `ps` waiting. Start and stop go to a second thread,
// one at a time, in arrival order.
#pragma once

#include "control/control_protocol.h"

#include <sys/types.h>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace osc::agent {

class ControlServer {
public:
    // Start and stop requests (never status).
    using Handler = std::function<control::ControlReply(const control::ControlRequest&)>;
    using PeerCheck = std::function<bool(uid_t peerUid)>;
    // Status requests, and the status in every error reply.
    using StatusProvider = std::function<control::AgentStatus()>;

    struct Options {
        std::string directory;
        int64_t pid = 0;
        // Refuse a directory that others can enter (tests that switch users turn this off).
        bool requirePrivateDirectory = true;
        // When `directory` cannot be trusted, serve from a fresh private one
        // beside it (fallbackDirectoryTemplate) instead of giving up.
        bool fallbackDirectory = true;
        PeerCheck peerCheck;           // default: peer uid equals our effective uid
        int receiveTimeoutMs = 2000;   // per connection, from accept to the end of the request line
        size_t maxConnections = 64;    // beyond this the oldest waiting connection is dropped
        size_t maxQueuedCommands = 8;  // start/stop requests waiting; more are refused at once
    };

    ControlServer(Options options, Handler handler, StatusProvider status);
    ~ControlServer();
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;

    // Creates the directory and socket and starts serving. False with `error`.
    bool start(std::string& error);
    // Stops serving and removes the socket file (and the fallback directory).
    void stop();
    const std::string& socketPath() const { return path_; }
    // Why the configured directory was not used; empty when it was.
    const std::string& fallbackReason() const { return fallbackReason_; }

    static bool sameUserOnly(uid_t peerUid);
    // Requests dropped because their client had given up.
    uint64_t droppedRequests() const { return dropped_.load(); }

private:
    struct Connection;
    struct QueuedCommand {
        int fd = -1;
        control::ControlRequest request;
    };

    bool prepareDirectory(std::string& dir, std::string& error);
    void serve();
    // False when the process is out of file descriptors (try again later).
    bool acceptAll(std::deque<Connection>& open);
    // True when the connection is finished with (answered, handed on or gone).
    bool readFrom(Connection& c);
    void dispatch(int fd, const std::string& line);
    void runCommands();
    void answer(int fd, const std::string& error, int timeoutMs = 0);

    Options options_;
    Handler handler_;
    StatusProvider status_;
    std::string path_, createdDirectory_, fallbackReason_;
    int listenFd_ = -1;
    int wakePipe_[2] = {-1, -1};
    std::thread thread_;

    std::thread commandThread_;
    std::mutex commandMutex_;
    std::condition_variable commandCv_;
    std::deque<QueuedCommand> commands_;
    bool stopping_ = false;
    std::atomic<uint64_t> dropped_{0};
};

}  // namespace osc::agent

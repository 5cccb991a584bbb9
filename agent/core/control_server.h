// The agent's end of the control socket: a Unix stream socket in a private
// per-user directory. Each connection carries one request line and gets one
// reply line. The peer's uid (SO_PEERCRED) must pass `PeerCheck`; oversized
// or malformed requests get an error reply and change nothing.
#pragma once

#include "control/control_protocol.h"

#include <functional>
#include <string>
#include <sys/types.h>
#include <thread>

namespace osc::agent {

class ControlServer {
public:
    using Handler = std::function<ControlReply(const ControlRequest&)>;
    using PeerCheck = std::function<bool(uid_t peerUid)>;
    // Failed requests still report the agent's status.
    using StatusProvider = std::function<AgentStatus()>;

    struct Options {
        std::string directory;
        int64_t pid = 0;
        // Refuse a directory that others can enter (tests that switch users turn this off).
        bool requirePrivateDirectory = true;
        PeerCheck peerCheck;  // default: peer uid equals our effective uid
        int receiveTimeoutMs = 2000;
    };

    ControlServer(Options options, Handler handler, StatusProvider status);
    ~ControlServer();
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;

    // Creates the directory and socket and starts serving. False with `error`.
    bool start(std::string& error);
    // Stops serving and removes the socket file.
    void stop();
    const std::string& socketPath() const { return path_; }

    static bool sameUserOnly(uid_t peerUid);

private:
    void serve();
    void handleConnection(int fd);

    Options options_;
    Handler handler_;
    StatusProvider status_;
    std::string path_;
    int listenFd_ = -1;
    int wakePipe_[2] = {-1, -1};
    std::thread thread_;
};

}  // namespace osc::agent

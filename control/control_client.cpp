#include "control/control_client.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace osc::agent {
namespace {

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() { if (fd_ >= 0) ::close(fd_); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(path + ": " + what);
}

bool waitFor(int fd, short events, int timeoutMs) {
    pollfd p{fd, events, 0};
    int rc;
    do { rc = ::poll(&p, 1, timeoutMs); } while (rc < 0 && errno == EINTR);
    return rc > 0;
}

int connectTo(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path)) fail(path, "socket path too long");
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail(path, std::string("socket: ") + std::strerror(errno));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        const int err = errno;
        ::close(fd);
        errno = err;
        fail(path, std::string("cannot connect: ") + std::strerror(err));
    }
    return fd;
}

bool processAlive(int64_t pid) {
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

std::string sendRaw(const std::string& socketPath, const std::string& bytes, int timeoutMs) {
    Fd fd(connectTo(socketPath));
    size_t sent = 0;
    while (sent < bytes.size()) {
        if (!waitFor(fd.get(), POLLOUT, timeoutMs)) fail(socketPath, "agent did not accept the request");
        ssize_t n = ::send(fd.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            // The agent may reply and close early (oversized request): read its answer.
            break;
        }
        sent += static_cast<size_t>(n);
    }
    std::string reply;
    char buf[1024];
    while (reply.find('\n') == std::string::npos && reply.size() <= kMaxMessageBytes) {
        if (!waitFor(fd.get(), POLLIN, timeoutMs)) fail(socketPath, "agent did not answer in time");
        ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        reply.append(buf, static_cast<size_t>(n));
    }
    if (reply.find('\n') == std::string::npos) fail(socketPath, "agent closed the connection without an answer");
    return reply.substr(0, reply.find('\n'));
}

ControlReply sendRequest(const std::string& socketPath, const ControlRequest& request, int timeoutMs) {
    const std::string line = sendRaw(socketPath, encodeRequest(request), timeoutMs);
    try {
        return parseReply(line);
    } catch (const std::invalid_argument& e) {
        fail(socketPath, e.what());
    }
}

std::vector<DiscoveredAgent> discoverAgents(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<DiscoveredAgent> agents;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const int64_t pid = pidFromSocketName(entry.path().filename().string());
        if (pid < 0) continue;
        const std::string path = entry.path().string();
        if (!processAlive(pid)) {
            fs::remove(entry.path(), ec);  // stale socket of a process that died without cleanup
            continue;
        }
        try {
            DiscoveredAgent a;
            a.pid = pid;
            a.socketPath = path;
            a.reply = sendRequest(path, ControlRequest{}, 2000);
            agents.push_back(std::move(a));
        } catch (const std::runtime_error&) {
            // Alive but not answering (pid reused, or an agent shutting down): not listed.
        }
    }
    std::sort(agents.begin(), agents.end(),
              [](const DiscoveredAgent& a, const DiscoveredAgent& b) { return a.pid < b.pid; });
    return agents;
}

}  // namespace osc::agent

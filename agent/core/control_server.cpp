#include "agent/core/control_server.h"

#include "analyzer/capture/background_thread.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace osc::agent {
namespace {

bool makePrivateDirectory(const std::string& dir, bool requirePrivate, std::string& error) {
    // mkdir -p, each new level 0700.
    for (size_t pos = 1; pos <= dir.size(); ++pos) {
        if (pos != dir.size() && dir[pos] != '/') continue;
        const std::string part = dir.substr(0, pos);
        if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
            error = part + ": cannot create: " + std::strerror(errno);
            return false;
        }
    }
    struct stat st{};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        error = dir + ": not a directory";
        return false;
    }
    if (requirePrivate && (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)) {
        error = dir + ": socket directory must be owned by this user with mode 0700";
        return false;
    }
    return true;
}

void sendAll(int fd, const std::string& text) {
    size_t sent = 0;
    while (sent < text.size()) {
        const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        sent += static_cast<size_t>(n);
    }
}

}  // namespace

ControlServer::ControlServer(Options options, Handler handler, StatusProvider status)
    : options_(std::move(options)), handler_(std::move(handler)), status_(std::move(status)) {
    if (!options_.peerCheck) options_.peerCheck = &ControlServer::sameUserOnly;
}

ControlServer::~ControlServer() { stop(); }

bool ControlServer::sameUserOnly(uid_t peerUid) { return peerUid == ::geteuid(); }

bool ControlServer::start(std::string& error) {
    if (!makePrivateDirectory(options_.directory, options_.requirePrivateDirectory, error)) return false;
    path_ = socketPathFor(options_.directory, options_.pid);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(addr.sun_path)) {
        error = path_ + ": socket path too long";
        return false;
    }
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    listenFd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listenFd_ < 0) {
        error = std::string("socket: ") + std::strerror(errno);
        return false;
    }
    ::unlink(path_.c_str());  // a leftover of an earlier process with our pid
    if (::bind(listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::chmod(path_.c_str(), 0600) != 0 || ::listen(listenFd_, 16) != 0) {
        error = path_ + ": " + std::strerror(errno);
        ::close(listenFd_);
        listenFd_ = -1;
        return false;
    }
    if (::pipe2(wakePipe_, O_CLOEXEC) != 0) {
        error = std::string("pipe: ") + std::strerror(errno);
        stop();
        return false;
    }
    thread_ = startBackgroundThread([this] { serve(); });
    return true;
}

void ControlServer::stop() {
    if (wakePipe_[1] >= 0) {
        const char b = 1;
        [[maybe_unused]] ssize_t n = ::write(wakePipe_[1], &b, 1);
    }
    if (thread_.joinable()) {
        if (thread_.get_id() == std::this_thread::get_id()) thread_.detach();
        else thread_.join();
    }
    if (listenFd_ >= 0) {
        ::close(listenFd_);
        listenFd_ = -1;
        ::unlink(path_.c_str());
    }
    for (int& fd : wakePipe_) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
}

void ControlServer::serve() {
    for (;;) {
        pollfd fds[2] = {{listenFd_, POLLIN, 0}, {wakePipe_[0], POLLIN, 0}};
        const int rc = ::poll(fds, 2, -1);
        if (rc < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[1].revents) return;
        if (!(fds[0].revents & POLLIN)) continue;
        const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        handleConnection(fd);
        ::close(fd);
    }
}

void ControlServer::handleConnection(int fd) {
    ControlReply reply;
    auto answer = [&](const std::string& error) {
        reply.ok = false;
        reply.error = error;
        if (status_) reply.status = status_();
        sendAll(fd, encodeReply(reply));
    };

    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || !options_.peerCheck(cred.uid)) {
        reply.ok = false;
        reply.error = "permission denied: the agent belongs to another user";
        sendAll(fd, encodeReply(reply));  // no status: nothing about the job leaks
        return;
    }

    std::string line;
    char buf[512];
    while (line.find('\n') == std::string::npos) {
        if (line.size() > kMaxMessageBytes) return answer("message too long");
        pollfd p{fd, POLLIN, 0};
        const int rc = ::poll(&p, 1, options_.receiveTimeoutMs);
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) return answer("timed out waiting for a request line");
        const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // peer went away
        line.append(buf, static_cast<size_t>(n));
    }
    line.resize(line.find('\n'));
    if (line.size() > kMaxMessageBytes) return answer("message too long");
    ControlRequest request;
    try {
        request = parseRequest(line);
    } catch (const std::invalid_argument& e) {
        return answer(std::string("malformed request: ") + e.what());
    }
    try {
        reply = handler_(request);
    } catch (const std::exception& e) {
        return answer(e.what());
    }
    sendAll(fd, encodeReply(reply));
}

}  // namespace osc::agent

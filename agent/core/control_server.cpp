#include "agent/core/control_server.h"

#include "analyzer/capture/background_thread.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace osc::agent {
namespace {

using Clock = std::chrono::steady_clock;

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
    if (requirePrivate) {
        if (auto why = control::untrustedDirectoryReason(dir, ::geteuid())) {
            error = dir + " " + *why;
            return false;
        }
        return true;
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        error = dir + ": not a directory";
        return false;
    }
    return true;
}

// Sends what it can before `timeoutMs` runs out; a client too slow to take
// one reply line loses it.
void sendAll(int fd, const std::string& text, int timeoutMs) {
    size_t sent = 0;
    while (sent < text.size()) {
        const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{fd, POLLOUT, 0};
            if (::poll(&p, 1, timeoutMs) > 0) continue;
        }
        return;
    }
}

int millisecondsUntil(Clock::time_point t, Clock::time_point now) {
    if (t <= now) return 0;
    // Rounded up, so the wake-up is never a spin just before the deadline.
    return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(t - now).count());
}

}  // namespace

struct ControlServer::Connection {
    int fd = -1;
    Clock::time_point deadline;
    std::string received;
};

ControlServer::ControlServer(Options options, Handler handler, StatusProvider status)
    : options_(std::move(options)), handler_(std::move(handler)), status_(std::move(status)) {
    if (!options_.peerCheck) options_.peerCheck = &ControlServer::sameUserOnly;
}

ControlServer::~ControlServer() { stop(); }

bool ControlServer::sameUserOnly(uid_t peerUid) { return peerUid == ::geteuid(); }

bool ControlServer::prepareDirectory(std::string& dir, std::string& error) {
    std::string why;
    if (makePrivateDirectory(dir, options_.requirePrivateDirectory, why)) return true;
    if (!options_.fallbackDirectory) {
        error = why;
        return false;
    }
    // Someone else may own the usual place (/tmp/overlapscope-<uid> made
    // first by another user): a fresh private directory beside it, which
    // clients also search, keeps the agent reachable.
    std::string fallback = control::fallbackDirectoryTemplate(dir);
    if (!::mkdtemp(fallback.data())) {
        error = why + "; no private directory beside it either (" + std::strerror(errno) + ")";
        return false;
    }
    fallbackReason_ = why;
    createdDirectory_ = fallback;
    dir = fallback;
    return true;
}

bool ControlServer::start(std::string& error) {
    std::string dir = options_.directory;
    if (!prepareDirectory(dir, error)) return false;
    path_ = control::socketPathFor(dir, options_.pid);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof(addr.sun_path)) {
        error = path_ + ": socket path too long";
        stop();
        return false;
    }
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    listenFd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listenFd_ < 0) {
        error = std::string("socket: ") + std::strerror(errno);
        stop();
        return false;
    }
    ::unlink(path_.c_str());  // a leftover of an earlier process with our pid
    if (::bind(listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::chmod(path_.c_str(), 0600) != 0 ||
        ::listen(listenFd_, 64) != 0) {
        error = path_ + ": " + std::strerror(errno);
        stop();
        return false;
    }
    if (::pipe2(wakePipe_, O_CLOEXEC) != 0) {
        error = std::string("pipe: ") + std::strerror(errno);
        stop();
        return false;
    }
    stopping_ = false;
    thread_ = startBackgroundThread([this] { serve(); });
    commandThread_ = startBackgroundThread([this] { runCommands(); });
    return true;
}

void ControlServer::stop() {
    if (wakePipe_[1] >= 0) {
        const char b = 1;
        [[maybe_unused]] ssize_t n = ::write(wakePipe_[1], &b, 1);
    }
    {
        std::lock_guard lock(commandMutex_);
        stopping_ = true;
    }
    commandCv_.notify_all();
    for (std::thread* t : {&thread_, &commandThread_}) {
        if (!t->joinable()) continue;
        if (t->get_id() == std::this_thread::get_id())
            t->detach();
        else
            t->join();
    }
    if (listenFd_ >= 0) {
        ::close(listenFd_);
        listenFd_ = -1;
        ::unlink(path_.c_str());
    }
    if (!createdDirectory_.empty()) {
        ::rmdir(createdDirectory_.c_str());
        createdDirectory_.clear();
    }
    for (int& fd : wakePipe_) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
}

void ControlServer::serve() {
    std::deque<Connection> open;  // oldest first
    std::vector<pollfd> fds;
    auto acceptResumes = Clock::time_point::min();  // later while out of file descriptors
    for (;;) {
        auto now = Clock::now();
        const bool accepting = now >= acceptResumes;
        fds.clear();
        fds.push_back({wakePipe_[0], POLLIN, 0});
        fds.push_back({accepting ? listenFd_ : -1, POLLIN, 0});  // poll skips a negative fd
        auto wake = accepting ? Clock::time_point::max() : acceptResumes;
        for (const Connection& c : open) {
            fds.push_back({c.fd, POLLIN, 0});
            wake = std::min(wake, c.deadline);
        }
        const int timeout = wake == Clock::time_point::max() ? -1 : millisecondsUntil(wake, now);
        if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;
        if (fds[0].revents) break;
        now = Clock::now();
        std::deque<Connection> waiting;
        for (size_t i = 0; i < open.size(); ++i) {
            Connection& c = open[i];
            if (fds[i + 2].revents && readFrom(c)) continue;
            if (now >= c.deadline) {
                answer(c.fd, "timed out waiting for a request line");
                ::close(c.fd);
                continue;
            }
            waiting.push_back(std::move(c));
        }
        open.swap(waiting);
        // Out of file descriptors, the pending connection would wake poll at
        // once, again and again: leave it queued for a while instead.
        if (accepting && (fds[1].revents & POLLIN) && !acceptAll(open))
            acceptResumes = Clock::now() + std::chrono::milliseconds(100);
    }
    for (const Connection& c : open) ::close(c.fd);
}

bool ControlServer::acceptAll(std::deque<Connection>& open) {
    for (;;) {
        const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return !(errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM);
        }
        ucred cred{};
        socklen_t len = sizeof(cred);
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || !options_.peerCheck(cred.uid)) {
            control::ControlReply denied;
            denied.error = "permission denied: the agent belongs to another user";
            sendAll(fd, control::encodeReply(denied), 0);  // no status: nothing about the job leaks
            ::close(fd);
            continue;
        }
        if (open.size() >= options_.maxConnections) {
            answer(open.front().fd, "too many connections waiting: this one was dropped");
            ::close(open.front().fd);
            open.pop_front();
        }
        open.push_back({fd, Clock::now() + std::chrono::milliseconds(options_.receiveTimeoutMs), {}});
    }
}

bool ControlServer::readFrom(Connection& c) {
    char buf[512];
    for (;;) {
        const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
        if (n <= 0) {  // the peer went away
            ::close(c.fd);
            return true;
        }
        c.received.append(buf, static_cast<size_t>(n));
        const size_t newline = c.received.find('\n');
        if (newline != std::string::npos) {
            c.received.resize(newline);
            dispatch(c.fd, c.received);
            return true;
        }
        if (c.received.size() > control::kMaxMessageBytes) {
            answer(c.fd, "message too long");
            ::close(c.fd);
            return true;
        }
    }
}

void ControlServer::dispatch(int fd, const std::string& line) {
    control::ControlRequest request;
    try {
        if (line.size() > control::kMaxMessageBytes) throw std::invalid_argument("message too long");
        request = control::parseRequest(line);
    } catch (const std::invalid_argument& e) {
        const std::string why = e.what();
        answer(fd, why == "message too long" ? why : "malformed request: " + why);
        ::close(fd);
        return;
    }
    // Read after its client stopped waiting (this process was stopped, say):
    // acting on it now would start or stop a capture nobody asked for any more.
    if (control::clientGaveUp(request)) {
        ++dropped_;
        ::close(fd);
        return;
    }
    if (request.command == control::ControlCommand::Status) {
        control::ControlReply reply;
        reply.ok = true;
        if (status_) reply.status = status_();
        sendAll(fd, control::encodeReply(reply), 0);
        ::close(fd);
        return;
    }
    {
        std::lock_guard lock(commandMutex_);
        if (!stopping_ && commands_.size() < options_.maxQueuedCommands) {
            commands_.push_back({fd, std::move(request)});
            commandCv_.notify_one();
            return;
        }
    }
    answer(fd, "busy: too many start/stop requests waiting");
    ::close(fd);
}

void ControlServer::runCommands() {
    for (;;) {
        QueuedCommand command;
        {
            std::unique_lock lock(commandMutex_);
            commandCv_.wait(lock, [&] { return stopping_ || !commands_.empty(); });
            if (commands_.empty()) return;
            command = std::move(commands_.front());
            commands_.pop_front();
            if (stopping_) {
                lock.unlock();
                answer(command.fd, "the agent is shutting down");
                ::close(command.fd);
                continue;
            }
        }
        // It may have waited behind a slow start or stop past its deadline.
        if (control::clientGaveUp(command.request)) {
            ++dropped_;
            ::close(command.fd);
            continue;
        }
        control::ControlReply reply;
        try {
            reply = handler_(command.request);
        } catch (const std::exception& e) {
            reply.ok = false;
            reply.error = e.what();
            if (status_) reply.status = status_();
        }
        // The client has been waiting for this one; give it a moment to read.
        sendAll(command.fd, control::encodeReply(reply), 1000);
        ::close(command.fd);
    }
}

void ControlServer::answer(int fd, const std::string& error, int timeoutMs) {
    control::ControlReply reply;
    reply.ok = false;
    reply.error = error;
    if (status_) reply.status = status_();
    sendAll(fd, control::encodeReply(reply), timeoutMs);
}

}  // namespace osc::agent

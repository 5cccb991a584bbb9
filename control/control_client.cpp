#include "control/control_client.h"

#include "control/process_facts.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace osc::control {
namespace {

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(path + ": " + what);
}

using Clock = std::chrono::steady_clock;

// Waits for `events` until `deadline`; false when it passed first.
bool waitFor(int fd, short events, Clock::time_point deadline) {
    pollfd p{fd, events, 0};
    int rc;
    do {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        rc = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0)));
    } while (rc < 0 && errno == EINTR);
    return rc > 0;
}

// "2 s", "0.5 s"
std::string secondsText(int ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", ms / 1000.0);
    return text;
}

uid_t resolve(uid_t uid) { return uid == kThisUser ? ::geteuid() : uid; }

std::string directoryOf(const std::string& socketPath) {
    const size_t slash = socketPath.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : socketPath.substr(0, slash);
}

void requireTrustedDirectory(const std::string& socketPath, uid_t uid) {
    const std::string dir = directoryOf(socketPath);
    if (auto why = untrustedDirectoryReason(dir, uid))
        fail(socketPath, "not trusted, nothing sent: its directory " + dir + " " + *why);
}

int connectTo(const std::string& path, int timeoutMs) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path)) fail(path, "socket path too long");
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail(path, std::string("socket: ") + std::strerror(errno));
    // Bounds the wait when the agent's accept queue is full.
    timeval tv{timeoutMs / 1000, (timeoutMs % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        const int err = errno;
        ::close(fd);
        fail(path, std::string("cannot connect: ") + std::strerror(err));
    }
    return fd;
}

// SO_PEERCRED on a connected socket names whoever called listen() on the other end.
void requireAgentOf(int fd, const std::string& path, uid_t uid) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        fail(path, std::string("cannot tell who listens on it: ") + std::strerror(errno));
    if (cred.uid != uid)
        fail(path, "not trusted, nothing sent: the process listening on it runs as uid " + std::to_string(cred.uid) +
                       ", not uid " + std::to_string(uid));
}

bool processAlive(int64_t pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

struct SearchedDirectory {
    std::string path;
    bool fallback = false;  // made by one agent with mkdtemp
};

// The directories to search, each checked; the untrusted ones are noted.
std::vector<SearchedDirectory> trustedDirectories(const std::string& dir, std::vector<std::string>* refused,
                                                  uid_t uid) {
    std::vector<SearchedDirectory> trusted;
    const std::vector<std::string> candidates = socketDirectoriesFor(dir);
    for (size_t i = 0; i < candidates.size(); ++i) {
        struct stat st {};
        if (::lstat(candidates[i].c_str(), &st) != 0) continue;  // no agent has made it yet
        if (const auto why = untrustedDirectoryReason(candidates[i], uid)) {
            if (refused) refused->push_back(candidates[i] + " " + *why + "; not searched for agents");
        } else {
            trusted.push_back({candidates[i], i > 0});
        }
    }
    return trusted;
}

}  // namespace

std::string sendRaw(const std::string& socketPath, const std::string& bytes, int timeoutMs, uid_t trustedUid) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    const uid_t uid = resolve(trustedUid);
    requireTrustedDirectory(socketPath, uid);
    Fd fd(connectTo(socketPath, timeoutMs));
    requireAgentOf(fd.get(), socketPath, uid);
    size_t sent = 0;
    while (sent < bytes.size()) {
        if (!waitFor(fd.get(), POLLOUT, deadline)) fail(socketPath, "agent did not accept the request");
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
        if (!waitFor(fd.get(), POLLIN, deadline))
            throw NoAnswer(socketPath + ": agent did not answer in " + secondsText(timeoutMs));
        ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        reply.append(buf, static_cast<size_t>(n));
    }
    if (reply.find('\n') == std::string::npos) fail(socketPath, "agent closed the connection without an answer");
    return reply.substr(0, reply.find('\n'));
}

ControlReply sendRequest(const std::string& socketPath, const ControlRequest& request, int timeoutMs,
                         uid_t trustedUid) {
    ControlRequest timed = request;
    if (!timed.deadlineUnixMs) timed.deadlineUnixMs = unixNowMs() + timeoutMs;
    const std::string line = sendRaw(socketPath, encodeRequest(timed), timeoutMs, trustedUid);
    try {
        return parseReply(line);
    } catch (const std::invalid_argument& e) {
        fail(socketPath, e.what());
    }
}

int answerTimeoutMs(int fallbackMs) {
    if (const char* v = std::getenv("OVERLAPSCOPE_ANSWER_TIMEOUT_MS"); v && *v) {
        char* end = nullptr;
        const long ms = std::strtol(v, &end, 10);
        if (*end == '\0' && ms >= 100 && ms <= 600000) return static_cast<int>(ms);
    }
    return fallbackMs;
}

std::string silenceReason(int64_t pid, int timeoutMs) {
    std::string why = "did not answer in " + secondsText(timeoutMs);
    const auto facts = processFacts(pid);
    if (!facts) return why;
    switch (facts->state) {
        case 'T':
            return why + " (the process is stopped: SIGSTOP or SIGTSTP; SIGCONT resumes it)";
        case 't':
            return why + " (the process is stopped by a debugger)";
        case 'D':
            return why + " (the process waits in the kernel, uninterruptibly: I/O or a driver call)";
        case 'Z':
            return why + " (the process has exited and was not reaped yet)";
        default:
            return why;
    }
}

std::vector<DiscoveredAgent> surveyAgents(const std::string& dir, std::vector<std::string>* refused, uid_t trustedUid,
                                          int timeoutMs) {
    namespace fs = std::filesystem;
    const uid_t uid = resolve(trustedUid);
    if (timeoutMs <= 0) timeoutMs = answerTimeoutMs();
    std::vector<DiscoveredAgent> agents;
    for (const auto& [d, fallback] : trustedDirectories(dir, refused, uid)) {
        std::error_code ec;
        bool removedStale = false;
        for (const auto& entry : fs::directory_iterator(d, ec)) {
            const int64_t pid = pidFromSocketName(entry.path().filename().string());
            if (pid < 0) continue;
            if (!processAlive(pid)) {
                // The socket of a process that died without cleaning up.
                removedStale = fs::remove(entry.path(), ec) || removedStale;
                continue;
            }
            DiscoveredAgent a;
            a.pid = pid;
            a.socketPath = entry.path().string();
            agents.push_back(std::move(a));
        }
        // Each fallback directory belongs to one agent: once its stale socket
        // is gone, so is the directory (rmdir leaves it if anything is left).
        if (removedStale && fallback) ::rmdir(d.c_str());
    }
    // All at once: a job of silent ranks costs one timeout, not one each.
    constexpr size_t kAtOnce = 64;
    for (size_t first = 0; first < agents.size(); first += kAtOnce) {
        std::vector<std::thread> asking;
        for (size_t i = first; i < std::min(agents.size(), first + kAtOnce); ++i)
            asking.emplace_back([&a = agents[i], uid, timeoutMs] {
                try {
                    a.reply = sendRequest(a.socketPath, ControlRequest{}, timeoutMs, uid);
                } catch (const NoAnswer&) {
                    a.answered = false;
                    a.problem = silenceReason(a.pid, timeoutMs);
                } catch (const std::runtime_error& e) {
                    a.answered = false;
                    a.problem = e.what();
                }
            });
        for (auto& t : asking) t.join();
    }
    for (DiscoveredAgent& a : agents) {
        if (a.answered) continue;
        a.reply = ControlReply{};
        a.reply.status.pid = a.pid;
        if (const auto facts = processFacts(a.pid)) {
            a.reply.status.rank = facts->rank;
            a.reply.status.job = facts->job;
            a.reply.status.commandLine = facts->commandLine;
        }
    }
    std::sort(agents.begin(), agents.end(),
              [](const DiscoveredAgent& a, const DiscoveredAgent& b) { return a.pid < b.pid; });
    return agents;
}

std::vector<DiscoveredAgent> discoverAgents(const std::string& dir, std::vector<std::string>* refused,
                                            uid_t trustedUid) {
    std::vector<DiscoveredAgent> agents = surveyAgents(dir, refused, trustedUid);
    // Alive but not answering (pid reused, or an agent shutting down): not listed here.
    std::erase_if(agents, [](const DiscoveredAgent& a) { return !a.answered; });
    return agents;
}

std::optional<std::string> findAgentSocket(int64_t pid, const std::string& dir, std::vector<std::string>* refused,
                                           uid_t trustedUid) {
    for (const auto& d : trustedDirectories(dir, refused, resolve(trustedUid))) {
        const std::string path = socketPathFor(d.path, pid);
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return path;
    }
    return std::nullopt;
}

}  // namespace osc::control

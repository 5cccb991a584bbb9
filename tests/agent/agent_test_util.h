// Helpers for the agent tests: private temporary directories and child
// processes with a chosen environment.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <cstring>
#include <memory>

#include "tests/support/temp_dir.h"

namespace osc::agent::test {

using TempDir = osc::testsupport::TempDir;

// A child process; stdout+stderr go to a file so tests can read them.
class Child {
public:
    Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
          const std::string& logPath)
        : log_(logPath) {
        pid_ = ::fork();
        if (pid_ == 0) {
            for (const auto& [k, v] : env) {
                if (v.empty())
                    ::unsetenv(k.c_str());
                else
                    ::setenv(k.c_str(), v.c_str(), 1);
            }
            const int fd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            ::dup2(fd, 1);
            ::dup2(fd, 2);
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
    }
    ~Child() {
        if (pid_ > 0 && !waited_) {
            ::kill(pid_, SIGKILL);
            int st;
            ::waitpid(pid_, &st, 0);
        }
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return pid_; }
    // Raw wait status, or -1 on timeout.
    int wait(double timeoutS = 30) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutS);
        while (std::chrono::steady_clock::now() < end) {
            int st = 0;
            const pid_t r = ::waitpid(pid_, &st, WNOHANG);
            if (r == pid_) {
                waited_ = true;
                return st;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return -1;
    }
    // Exit code, or 128+signal.
    int waitExitCode(double timeoutS = 30) {
        const int st = wait(timeoutS);
        if (st < 0) return -1;
        if (WIFEXITED(st)) return WEXITSTATUS(st);
        if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
        return -2;
    }
    std::string output() const {
        std::string s;
        if (FILE* f = std::fopen(log_.c_str(), "r")) {
            char buf[4096];
            size_t n;
            while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
            std::fclose(f);
        }
        return s;
    }

private:
    pid_t pid_ = -1;
    bool waited_ = false;
    std::string log_;
};

// Disk full, played by a file size limit: writes past it fail with EFBIG.
// Children started meanwhile keep the limit (and SIGXFSZ ignored) for life.
class FileSizeLimit {
public:
    explicit FileSizeLimit(rlim_t bytes) {
        ::getrlimit(RLIMIT_FSIZE, &saved_);
        previousHandler_ = std::signal(SIGXFSZ, SIG_IGN);  // a failed write, not a dead process
        rlimit limited = saved_;
        limited.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &limited);
    }
    ~FileSizeLimit() {
        lift();
        std::signal(SIGXFSZ, previousHandler_);
    }
    void lift() { ::setrlimit(RLIMIT_FSIZE, &saved_); }

private:
    rlimit saved_{};
    void (*previousHandler_)(int) = SIG_DFL;
};

inline bool waitUntil(const std::function<bool()>& condition, double timeoutS = 10) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutS);
    while (std::chrono::steady_clock::now() < end) {
        if (condition()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return condition();
}

inline std::vector<std::string> filesIn(const std::string& dir, const std::string& suffix = ".sqlite") {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// ---- raw Unix sockets: strangers and fake agents that do not use our code ----

inline sockaddr_un unixAddress(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    return addr;
}

// A socket bound to `path`, not yet listening; -1 on failure.
inline int boundSocket(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un addr = unixAddress(path);
    ::unlink(path.c_str());
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return -1;
    return fd;
}

// Connects without waiting for the other end to accept; -1 when refused.
inline int connectNonBlocking(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const sockaddr_un addr = unixAddress(path);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Sends `bytes` and returns the first reply line ("" when none comes in 2 s).
inline std::string rawExchange(const std::string& path, const std::string& bytes) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un addr = unixAddress(path);
    std::string reply;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
        // May fail when the other end has answered and closed already: read that answer.
        [[maybe_unused]] ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        char buf[1024];
        pollfd p{fd, POLLIN, 0};
        while (reply.find('\n') == std::string::npos && ::poll(&p, 1, 2000) > 0) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            reply.append(buf, static_cast<size_t>(n));
        }
    }
    ::close(fd);
    return reply.substr(0, reply.find('\n'));
}

// A listening socket named like an agent's, in a private directory of ours,
// that never answers: it only tells whether anyone connected.
class RawListener {
public:
    static std::unique_ptr<RawListener> open(const std::string& dir, int64_t pid) {
        ::mkdir(dir.c_str(), 0700);
        auto l = std::unique_ptr<RawListener>(new RawListener);
        l->path_ = dir + "/agent-" + std::to_string(pid) + ".sock";
        l->fd_ = boundSocket(l->path_);
        if (l->fd_ < 0 || ::listen(l->fd_, 16) != 0) return nullptr;
        return l;
    }
    ~RawListener() {
        if (fd_ >= 0) ::close(fd_);
        ::unlink(path_.c_str());
    }
    const std::string& path() const { return path_; }
    // Connections made so far and not yet counted.
    int pendingConnections() {
        ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
        int n = 0;
        for (int c; (c = ::accept(fd_, nullptr, nullptr)) >= 0; ++n) ::close(c);
        return n;
    }

private:
    RawListener() = default;
    std::string path_;
    int fd_ = -1;
};

// A fake agent: listens at `path` and answers every connection with `reply`.
class AnsweringListener {
public:
    AnsweringListener(const std::string& path, std::string reply) : path_(path), reply_(std::move(reply)) {
        fd_ = boundSocket(path_);
        if (fd_ >= 0 && ::listen(fd_, 16) == 0) thread_ = std::thread([this] { serve(); });
    }
    ~AnsweringListener() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
        if (fd_ >= 0) ::close(fd_);
        ::unlink(path_.c_str());
    }
    AnsweringListener(const AnsweringListener&) = delete;
    AnsweringListener& operator=(const AnsweringListener&) = delete;

private:
    void serve() {
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) continue;
            char buf[4096];
            pollfd q{c, POLLIN, 0};
            if (::poll(&q, 1, 1000) > 0) {
                [[maybe_unused]] ssize_t n = ::recv(c, buf, sizeof buf, 0);  // the request, whatever it is
            }
            [[maybe_unused]] ssize_t sent = ::send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
            ::close(c);
        }
    }
    std::string path_, reply_;
    int fd_ = -1;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace osc::agent::test

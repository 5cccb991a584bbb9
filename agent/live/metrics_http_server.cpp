#include "agent/live/metrics_http_server.h"

#include "agent/live/clocks.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace osc::agent::live {
namespace {

std::string response(const char* status, const std::string& type, const std::string& body, bool withBody) {
    std::string r = std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
    if (withBody) r += body;
    return r;
}

}  // namespace

std::string answerHttpRequest(const std::string& head, const std::function<std::string()>& render) {
    const size_t lineEnd = head.find("\r\n");
    const std::string line = head.substr(0, lineEnd);
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
    if (sp1 == std::string::npos || sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0)
        return response("400 Bad Request", "text/plain", "bad request\n", true);
    const std::string method = line.substr(0, sp1);
    std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    target = target.substr(0, target.find('?'));
    if (method != "GET" && method != "HEAD")
        return response("405 Method Not Allowed", "text/plain", "only GET and HEAD\n", true);
    if (target != "/metrics") return response("404 Not Found", "text/plain", "see /metrics\n", method == "GET");
    return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render(), method == "GET");
}

MetricsHttpServer::MetricsHttpServer(Options options) : options_(std::move(options)) {}

MetricsHttpServer::~MetricsHttpServer() {
    for (auto& c : connections_) close(c);
    if (listen_ >= 0) ::close(listen_);
}

bool MetricsHttpServer::start(std::string& error) {
    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(options_.port);
    if (::getaddrinfo(options_.address.c_str(), port.c_str(), &hints, &found) != 0 || !found) {
        error = "metrics address '" + options_.address + "' is not a numeric IPv4 or IPv6 address";
        return false;
    }
    listen_ = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    const int on = 1;
    if (listen_ >= 0) ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    const bool ok =
        listen_ >= 0 && ::bind(listen_, found->ai_addr, found->ai_addrlen) == 0 && ::listen(listen_, 16) == 0;
    ::freeaddrinfo(found);
    if (!ok) {
        error = "metrics port " + options_.address + ":" + port + ": " + std::strerror(errno);
        if (listen_ >= 0) ::close(listen_);
        listen_ = -1;
        return false;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    return true;
}

void MetricsHttpServer::serveUntil(int64_t deadlineNs, int wakeFd, const std::function<std::string()>& render) {
    std::vector<pollfd> fds;
    for (;;) {
        const int64_t now = steadyNowNs();
        for (auto& c : connections_)
            if (now >= c.deadlineNs) close(c);
        std::erase_if(connections_, [](const Connection& c) { return c.fd < 0; });
        if (now >= deadlineNs) return;
        int64_t until = deadlineNs;
        for (const auto& c : connections_) until = std::min(until, c.deadlineNs);
        fds.clear();
        fds.push_back({wakeFd, POLLIN, 0});
        fds.push_back({listen_, POLLIN, 0});
        for (const auto& c : connections_) fds.push_back({c.fd, static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
        const int timeoutMs = static_cast<int>(std::max<int64_t>(0, (until - now + 999999) / 1000000));
        const int n = ::poll(fds.data(), fds.size(), timeoutMs);
        if (n < 0 && errno != EINTR) return;
        if (n <= 0) continue;
        if (fds[0].revents) return;
        // Connections first: accept() may reorder the vector.
        for (size_t i = 0; i < connections_.size(); ++i) {
            const short ev = fds[i + 2].revents;
            if (!ev) continue;
            Connection& c = connections_[i];
            if (ev & (POLLERR | POLLNVAL))
                close(c);
            else if (c.answering)
                write(c);
            else
                read(c, render);
        }
        if (fds[1].revents & POLLIN) accept();
    }
}

void MetricsHttpServer::accept() {
    for (;;) {
        const int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;
        std::erase_if(connections_, [](const Connection& c) { return c.fd < 0; });
        if (connections_.size() >= options_.maxConnections) {
            close(connections_.front());  // the oldest: a flood of idle clients cannot lock scrapes out
            connections_.erase(connections_.begin());
        }
        Connection c;
        c.fd = fd;
        c.deadlineNs = steadyNowNs() + int64_t{options_.deadlineMs} * 1000000;
        connections_.push_back(std::move(c));
    }
}

void MetricsHttpServer::read(Connection& c, const std::function<std::string()>& render) {
    char buf[2048];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) close(c);
        return;
    }
    c.in.append(buf, static_cast<size_t>(n));
    const size_t headEnd = c.in.find("\r\n\r\n");
    if (headEnd == std::string::npos && c.in.find("\n\n") == std::string::npos) {
        if (c.in.size() > options_.maxRequestBytes) {
            c.out = response("431 Request Header Fields Too Large", "text/plain", "request too large\n", true);
            c.answering = true;
            write(c);
        }
        return;
    }
    c.out = answerHttpRequest(c.in, render);
    c.answering = true;
    ++served_;
    write(c);
}

void MetricsHttpServer::write(Connection& c) {
    while (c.sent < c.out.size()) {
        const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR) close(c);
            return;
        }
        c.sent += static_cast<size_t>(n);
    }
    close(c);
}

void MetricsHttpServer::close(Connection& c) {
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
}

}  // namespace osc::agent::live

// `--metrics-port`: the telemetry over HTTP at /metrics, for a Prometheus
// server to scrape. Deliberately small: HTTP/1.0-style exchanges (one
// request per connection, then close), GET and HEAD of /metrics only, a
// bounded number of connections each with a deadline and a bounded request,
// non-blocking sockets polled by the caller's thread (metrics_publisher.h).
// A slow or hostile client costs one slot until its deadline and never
// blocks the thread, and nothing here can stop the application.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace osc::agent::live {

class MetricsHttpServer {
public:
    struct Options {
        std::string address = "127.0.0.1";  // numeric IPv4 or IPv6
        int port = 0;                       // 0: any free port (tests)
        size_t maxConnections = 16;         // beyond, the oldest is closed
        int deadlineMs = 2000;              // from accept to the last byte of the answer
        size_t maxRequestBytes = 8192;
    };

    explicit MetricsHttpServer(Options options);
    ~MetricsHttpServer();
    MetricsHttpServer(const MetricsHttpServer&) = delete;
    MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

    // Binds and listens; false with a one-line `error` (port in use...).
    bool start(std::string& error);
    // Serves until `deadlineNs` (CLOCK_MONOTONIC) or until `wakeFd` is
    // readable; `render` makes the body of each /metrics answer.
    void serveUntil(int64_t deadlineNs, int wakeFd, const std::function<std::string()>& render);
    int port() const { return port_; }
    uint64_t requestsServed() const { return served_; }

private:
    struct Connection {
        int fd = -1;
        int64_t deadlineNs = 0;
        std::string in, out;
        size_t sent = 0;
        bool answering = false;
    };
    void accept();
    void read(Connection& c, const std::function<std::string()>& render);
    void write(Connection& c);
    void close(Connection& c);

    Options options_;
    int listen_ = -1;
    int port_ = 0;
    std::vector<Connection> connections_;
    uint64_t served_ = 0;
};

// The answer to one request head (exposed for tests): the status line,
// headers and, for GET /metrics, the body made by `render`.
std::string answerHttpRequest(const std::string& head, const std::function<std::string()>& render);

}  // namespace osc::agent::live

// One agent thread that publishes the telemetry: it rewrites the metrics
// file every period and serves /metrics in between (either or both). Its
// failures (a full disk, a port in use) print one line each and never reach
// the application.
#pragma once

#include "agent/live/metrics_http_server.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace osc::agent::live {

class MetricsPublisher {
public:
    struct Options {
        std::string filePath;  // "" = no file
        std::optional<MetricsHttpServer::Options> http;
        int periodMs = 1000;
        bool removeFileAtStop = true;  // a finished process leaves no stale file
        // Called by start() before anything is published, with the HTTP port
        // listened on (0 when none): what the text then says of it.
        std::function<void(int port)> httpReady;
    };
    using Render = std::function<std::string()>;

    MetricsPublisher(Options options, Render render);
    ~MetricsPublisher();
    MetricsPublisher(const MetricsPublisher&) = delete;
    MetricsPublisher& operator=(const MetricsPublisher&) = delete;

    // Binds the port (if any) and starts the thread. A port that cannot be
    // bound is reported in `error` and the file goes on without it.
    void start(std::string& error);
    void stop();
    int httpPort() const { return http_ ? http_->port() : 0; }
    uint64_t fileWrites() const { return fileWrites_.load(); }

private:
    void loop();

    Options options_;
    Render render_;
    std::unique_ptr<MetricsHttpServer> http_;
    int wake_[2] = {-1, -1};
    std::atomic<bool> stopping_{false};
    std::atomic<uint64_t> fileWrites_{0};
    std::string lastFileError_;
    std::thread thread_;
};

}  // namespace osc::agent::live

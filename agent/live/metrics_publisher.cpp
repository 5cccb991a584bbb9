#include "agent/live/metrics_publisher.h"

#include "agent/live/clocks.h"

#include "agent/live/metrics_file.h"
#include "analyzer/capture/background_thread.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <cstdio>
#include <ctime>

namespace osc::agent::live {
MetricsPublisher::MetricsPublisher(Options options, Render render)
    : options_(std::move(options)), render_(std::move(render)) {}

MetricsPublisher::~MetricsPublisher() { stop(); }

void MetricsPublisher::start(std::string& error) {
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
        error = "metrics: cannot create a pipe";
        return;
    }
    if (options_.http) {
        http_ = std::make_unique<MetricsHttpServer>(*options_.http);
        if (!http_->start(error)) http_.reset();
    }
    if (options_.httpReady) options_.httpReady(httpPort());
    if (options_.filePath.empty() && !http_) return;
    thread_ = startBackgroundThread([this] { loop(); });
}

void MetricsPublisher::stop() {
    if (stopping_.exchange(true)) return;
    if (wake_[1] >= 0) {
        const char byte = 1;
        [[maybe_unused]] ssize_t n = ::write(wake_[1], &byte, 1);
    }
    if (thread_.joinable()) thread_.join();
    if (!options_.filePath.empty() && options_.removeFileAtStop) ::unlink(options_.filePath.c_str());
    for (int& fd : wake_)
        if (fd >= 0) ::close(fd), fd = -1;
    http_.reset();
}

void MetricsPublisher::loop() {
    ::pthread_setname_np(::pthread_self(), "osc-metrics");
    const int64_t period = int64_t{options_.periodMs} * 1000000;
    int64_t next = steadyNowNs();
    while (!stopping_) {
        if (!options_.filePath.empty()) {
            try {
                writeMetricsFile(options_.filePath, render_());
                fileWrites_.fetch_add(1);
                lastFileError_.clear();
            } catch (const std::exception& e) {
                // Said once per cause, not once a second.
                if (lastFileError_ != e.what()) std::fprintf(stderr, "overlapscope-agent: %s\n", e.what());
                lastFileError_ = e.what();
            }
        }
        next += period;
        const int64_t now = steadyNowNs();
        if (next <= now) next = now + period;  // fell behind: no burst of rewrites
        if (http_) {
            http_->serveUntil(next, wake_[0], render_);
        } else {
            pollfd p{wake_[0], POLLIN, 0};
            ::poll(&p, 1, static_cast<int>((next - now) / 1000000));
        }
    }
}

}  // namespace osc::agent::live

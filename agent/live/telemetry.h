// The always-on overlap telemetry of one process: per GPU, the last closed
// step's figures (gauges) and running totals (counters, which only grow and
// survive any number of steps in constant memory), plus the agent's own
// health. Written by the writer thread as steps close, read as Prometheus
// text by whoever publishes it (metrics_publisher.h).
#pragma once

#include "agent/live/step_metrics.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace osc::agent::live {

struct TelemetryIdentity {
    std::string rank;  // "" when the launcher set none
    std::string host;
    std::string job;
};

// What the record stream and the step assembly say about themselves.
struct AgentHealth {
    bool streaming = false;
    uint64_t droppedRecords = 0;  // lost before decoding (buffers full)
    uint64_t lateRows = 0, rowsDropped = 0, heldRows = 0, openSteps = 0;
    uint64_t stepCaptures = 0, conditionCaptures = 0;
    uint64_t lookbackSteps = 0, lookbackRows = 0, lookbackBytes = 0;  // the ring now
};

// The HTTP endpoint (--metrics-port): the port it listens on, or why not.
struct MetricsEndpoint {
    bool wanted = false;  // --metrics-port was given
    bool up = false;      // listening
    int port = 0;         // the port listened on (0 when not)
};

class Telemetry {
public:
    explicit Telemetry(TelemetryIdentity who) : who_(std::move(who)) {}

    void record(const DeviceStepMetrics& step);
    void setHealth(const AgentHealth& health);
    void setEndpoint(const MetricsEndpoint& endpoint);
    // The Prometheus text of everything so far; `nowUnixS` is the snapshot's time.
    std::string prometheusText(double nowUnixS) const;

    struct DeviceSeries {
        DeviceStepMetrics last;
        uint64_t steps = 0, incompleteSteps = 0;
        TimeNs window = 0, compute = 0, comm = 0, overlap = 0, exposed = 0, idle = 0;
        TimeNs wait = 0, exposedWait = 0, transfer = 0;
        TimeNs idleBetween = 0;  // GPU idle between consecutive steps' windows
        bool waitKnown = false;
        uint64_t bytes = 0;
        double busBytes = 0;
    };
    std::map<uint32_t, DeviceSeries> devices() const;

private:
    const TelemetryIdentity who_;
    mutable std::mutex mutex_;
    std::map<uint32_t, DeviceSeries> devices_;
    AgentHealth health_;
    MetricsEndpoint endpoint_;
};

}  // namespace osc::agent::live

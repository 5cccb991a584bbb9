#include "agent/live/telemetry.h"

#include "agent/live/prometheus_text.h"

#include <cmath>
#include <functional>
#include <limits>

namespace osc::agent::live {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

double seconds(TimeNs ns) { return static_cast<double>(ns) / 1e9; }

struct DeviceFamily {
    const char* name;
    const char* type;
    const char* help;
    // The value, or nullopt to leave the device's sample out.
    std::function<std::optional<double>(const Telemetry::DeviceSeries&)> value;
};

// Never destroyed: built on the publisher's first pass, after the agent's
// exit handler was registered, a destructible table would be torn down
// before that handler stops the publisher, which may be reading it.
const std::vector<DeviceFamily>& deviceFamilies() {
    using S = Telemetry::DeviceSeries;
    static const auto* families = new std::vector<DeviceFamily>{
        {"overlapscope_step", "gauge", "Number of the last closed step (from its range name; -1 without one)",
         [](const S& s) { return static_cast<double>(s.last.number); }},
        {"overlapscope_step_seconds", "gauge", "GPU window of the last closed step",
         [](const S& s) { return seconds(s.last.metrics.window_ns); }},
        {"overlapscope_overlap_ratio", "gauge",
         "Share of the last step's communication that ran under compute (NaN without communication)",
         [](const S& s) { return s.last.metrics.overlap_ratio.value_or(kNan); }},
        {"overlapscope_exposed_comm_seconds", "gauge", "Communication not hidden by compute in the last step",
         [](const S& s) { return seconds(s.last.metrics.exposed_comm_ns); }},
        {"overlapscope_exposed_comm_ratio", "gauge", "Exposed communication over the last step's GPU window",
         [](const S& s) -> std::optional<double> {
             if (s.last.metrics.window_ns <= 0) return kNan;
             return static_cast<double>(s.last.metrics.exposed_comm_ns) / static_cast<double>(s.last.metrics.window_ns);
         }},
        {"overlapscope_compute_seconds", "gauge", "Compute (union over streams) in the last step",
         [](const S& s) { return seconds(s.last.metrics.compute_ns); }},
        {"overlapscope_comm_seconds", "gauge", "Communication (union over streams) in the last step",
         [](const S& s) { return seconds(s.last.metrics.comm_ns); }},
        {"overlapscope_idle_seconds", "gauge", "GPU idle time inside the last step's window",
         [](const S& s) { return seconds(s.last.metrics.idle_ns); }},
        {"overlapscope_idle_between_steps_seconds", "gauge",
         "GPU idle time between the previous step's window and the last step's (a data loader, the host)",
         [](const S& s) -> std::optional<double> {
             if (!s.last.idleBefore) return std::nullopt;
             return seconds(*s.last.idleBefore);
         }},
        {"overlapscope_comm_wait_seconds", "gauge",
         "Communication spent waiting for the slowest GPU of this process in the last step",
         [](const S& s) -> std::optional<double> {
             if (!s.last.wait) return std::nullopt;
             return seconds(s.last.wait->comm_wait_ns);
         }},
        {"overlapscope_comm_bytes", "gauge", "Bytes of the last step's collectives (NCCL plugin)",
         [](const S& s) { return static_cast<double>(s.last.bytes); }},
        {"overlapscope_bus_bandwidth_bytes_per_second", "gauge",
         "Bus bandwidth of the last step's collectives (nccl-tests factors over transfer time)",
         [](const S& s) -> std::optional<double> {
             if (s.last.transferNs <= 0) return std::nullopt;
             return s.last.busBytes / seconds(s.last.transferNs);
         }},
        {"overlapscope_steps_total", "counter", "Steps closed", [](const S& s) { return double(s.steps); }},
        {"overlapscope_incomplete_steps_total", "counter",
         "Steps closed before every launch had its GPU record (a record was lost)",
         [](const S& s) { return double(s.incompleteSteps); }},
        {"overlapscope_step_seconds_total", "counter", "Sum of the steps' GPU windows",
         [](const S& s) { return seconds(s.window); }},
        {"overlapscope_exposed_comm_seconds_total", "counter", "Exposed communication over all steps",
         [](const S& s) { return seconds(s.exposed); }},
        {"overlapscope_compute_seconds_total", "counter", "Compute over all steps",
         [](const S& s) { return seconds(s.compute); }},
        {"overlapscope_comm_seconds_total", "counter", "Communication over all steps",
         [](const S& s) { return seconds(s.comm); }},
        {"overlapscope_overlap_seconds_total", "counter", "Communication under compute over all steps",
         [](const S& s) { return seconds(s.overlap); }},
        {"overlapscope_idle_seconds_total", "counter", "GPU idle time inside steps",
         [](const S& s) { return seconds(s.idle); }},
        {"overlapscope_idle_between_steps_seconds_total", "counter",
         "GPU idle time between consecutive steps' windows; with step_seconds_total, the wall-clock time of the "
         "steps seen",
         [](const S& s) { return seconds(s.idleBetween); }},
        {"overlapscope_comm_wait_seconds_total", "counter",
         "Waiting for the slowest GPU of this process over all steps",
         [](const S& s) -> std::optional<double> {
             if (!s.waitKnown) return std::nullopt;
             return seconds(s.wait);
         }},
        {"overlapscope_exposed_comm_wait_seconds_total", "counter", "Of that waiting, the part compute did not hide",
         [](const S& s) -> std::optional<double> {
             if (!s.waitKnown) return std::nullopt;
             return seconds(s.exposedWait);
         }},
        {"overlapscope_comm_bytes_total", "counter", "Bytes of collectives over all steps",
         [](const S& s) { return double(s.bytes); }},
        {"overlapscope_comm_bus_bytes_total", "counter",
         "Bytes times the nccl-tests bus factor; over comm_transfer_seconds_total: bus bandwidth",
         [](const S& s) { return s.busBytes; }},
        {"overlapscope_comm_transfer_seconds_total", "counter", "Time the collectives with known sizes took to move",
         [](const S& s) { return seconds(s.transfer); }},
    };
    return *families;
}

}  // namespace

void Telemetry::record(const DeviceStepMetrics& step) {
    std::lock_guard lock(mutex_);
    DeviceSeries& s = devices_[step.device];
    s.last = step;
    ++s.steps;
    if (!step.complete) ++s.incompleteSteps;
    const OverlapMetrics& m = step.metrics;
    s.window += m.window_ns;
    s.compute += m.compute_ns;
    s.comm += m.comm_ns;
    s.overlap += m.overlap_ns;
    s.exposed += m.exposed_comm_ns;
    s.idle += m.idle_ns;
    if (step.wait) {
        s.waitKnown = true;
        s.wait += step.wait->comm_wait_ns;
        s.exposedWait += step.wait->exposed_wait_ns;
    }
    s.bytes += step.bytes;
    s.busBytes += step.busBytes;
    s.transfer += step.transferNs;
    s.idleBetween += step.idleBefore.value_or(0);
}

void Telemetry::setHealth(const AgentHealth& health) {
    std::lock_guard lock(mutex_);
    health_ = health;
}

void Telemetry::setEndpoint(const MetricsEndpoint& endpoint) {
    std::lock_guard lock(mutex_);
    endpoint_ = endpoint;
}

std::map<uint32_t, Telemetry::DeviceSeries> Telemetry::devices() const {
    std::lock_guard lock(mutex_);
    return devices_;
}

std::string Telemetry::prometheusText(double nowUnixS) const {
    std::map<uint32_t, DeviceSeries> devices;
    AgentHealth health;
    MetricsEndpoint endpoint;
    {
        std::lock_guard lock(mutex_);
        devices = devices_;
        health = health_;
        endpoint = endpoint_;
    }
    PrometheusText out;
    const Labels process = {{"rank", who_.rank}, {"host", who_.host}, {"job", who_.job}};
    for (const DeviceFamily& f : deviceFamilies()) {
        bool started = false;
        for (const auto& [gpu, series] : devices) {
            const std::optional<double> v = f.value(series);
            if (!v) continue;
            if (!started) out.family(f.name, f.type, f.help);
            started = true;
            Labels labels = process;
            labels.insert(labels.begin() + 2, {"gpu", std::to_string(gpu)});
            out.sample(labels, *v);
        }
    }
    const auto agent = [&](const char* name, const char* type, const char* help, double value) {
        out.family(name, type, help);
        out.sample(process, value);
    };
    agent("overlapscope_agent_streaming", "gauge", "1 while the agent records (CUPTI subscribed), else 0",
          health.streaming ? 1 : 0);
    agent("overlapscope_agent_dropped_records_total", "counter",
          "Records lost because the agent's buffers were full (this stream)", double(health.droppedRecords));
    agent("overlapscope_agent_late_rows_total", "counter", "Rows that came after their step had closed",
          double(health.lateRows));
    agent("overlapscope_agent_rows_dropped_total", "counter", "Rows dropped to keep memory bounded",
          double(health.rowsDropped));
    agent("overlapscope_agent_held_rows", "gauge", "Rows held for steps not closed yet", double(health.heldRows));
    agent("overlapscope_agent_open_steps", "gauge", "Step ranges ended whose steps are not closed yet",
          double(health.openSteps));
    agent("overlapscope_agent_step_captures_total", "counter", "Step captures written (attach --steps, --capture-when)",
          double(health.stepCaptures));
    agent("overlapscope_agent_condition_captures_total", "counter", "Captures started by --capture-when",
          double(health.conditionCaptures));
    agent("overlapscope_agent_lookback_steps", "gauge", "Steps held in the look-back ring (run --lookback)",
          double(health.lookbackSteps));
    agent("overlapscope_agent_lookback_bytes", "gauge", "Memory the look-back ring holds",
          double(health.lookbackBytes));
    if (endpoint.wanted) {
        agent("overlapscope_agent_metrics_up", "gauge",
              "1 while /metrics is served on overlapscope_agent_metrics_port, 0 when the port could not be taken "
              "(this file then says so)",
              endpoint.up ? 1 : 0);
        agent("overlapscope_agent_metrics_port", "gauge", "The TCP port /metrics is served on (0 when none)",
              double(endpoint.port));
    }
    agent("overlapscope_agent_last_update_timestamp_seconds", "gauge",
          "When this text was made (Unix time): a stale file shows its age here", nowUnixS);
    return out.text();
}

}  // namespace osc::agent::live

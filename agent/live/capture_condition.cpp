#include "agent/live/capture_condition.h"

namespace osc::agent::live {

std::optional<double> conditionMetric(std::string_view metric, const DeviceStepMetrics& s) {
    const OverlapMetrics& m = s.metrics;
    const auto ratio = [](TimeNs a, TimeNs b) -> std::optional<double> {
        if (b <= 0) return std::nullopt;
        return static_cast<double>(a) / static_cast<double>(b);
    };
    if (metric == "exposed_comm_ratio") return ratio(m.exposed_comm_ns, m.window_ns);
    if (metric == "exposed_comm_seconds") return m.exposed_comm_ns / 1e9;
    if (metric == "overlap_ratio") return m.overlap_ratio;
    if (metric == "step_seconds") return m.window_ns / 1e9;
    if (metric == "comm_seconds") return m.comm_ns / 1e9;
    if (metric == "compute_seconds") return m.compute_ns / 1e9;
    if (metric == "idle_ratio") return ratio(m.idle_ns, m.window_ns);
    if (metric == "comm_wait_seconds" && s.wait) return s.wait->comm_wait_ns / 1e9;
    return std::nullopt;
}

bool ConditionWatch::observe(const std::vector<DeviceStepMetrics>& step, int64_t steadyNs, bool busy) {
    bool holds = false;
    for (const auto& d : step) {
        const std::optional<double> v = conditionMetric(condition_.metric, d);
        if (!v) continue;
        switch (condition_.op) {
            case CaptureCondition::Op::Greater:
                holds = holds || *v > condition_.threshold;
                break;
            case CaptureCondition::Op::GreaterEqual:
                holds = holds || *v >= condition_.threshold;
                break;
            case CaptureCondition::Op::Less:
                holds = holds || *v < condition_.threshold;
                break;
            case CaptureCondition::Op::LessEqual:
                holds = holds || *v <= condition_.threshold;
                break;
        }
    }
    run_ = holds ? run_ + 1 : 0;
    if (run_ < condition_.steps || busy) return false;
    if (lastStartNs_ && steadyNs - *lastStartNs_ < cooldownNs_) return false;
    lastStartNs_ = steadyNs;
    run_ = 0;
    return true;
}

}  // namespace osc::agent::live

#include "agent/live/step_metrics.h"

#include "agent/live/bus_bandwidth.h"
#include "analyzer/crossrank/analyze.h"

#include <algorithm>
#include <map>

namespace osc::agent::live {

std::vector<DeviceStepMetrics> measureStep(const ClosedStep& step, const AnalysisSettings& settings) {
    std::vector<DeviceStepMetrics> out;
    if (!step.capture) return out;
    // The figures published, not the findings and lead-ups a report adds.
    const Analysis a = analyze(*step.capture, settings, AnalysisDepth::StepFigures);
    // When this process's devices matched an operation, its last arrival
    // ends every device's wait for it (crossrank's splitAtLastArrival).
    std::map<std::pair<int, int>, TimeNs> lastArrival;
    for (const MatchedCollective& m : a.matched) {
        TimeNs last = INT64_MIN;
        for (const auto& [d, c] : m.instances) last = std::max(last, a.devices[d].collectives[c].start_ns);
        for (const auto& inst : m.instances) lastArrival[inst] = last;
    }
    for (size_t d = 0; d < a.devices.size(); ++d) {
        const DeviceAnalysis& dev = a.devices[d];
        if (dev.steps.empty()) continue;  // the step launched nothing here
        const StepAnalysis& s = dev.steps.front();
        DeviceStepMetrics m;
        m.device = dev.device;
        m.step = s.name;
        m.number = step.number;
        m.complete = step.complete;
        m.metrics = s.metrics;
        m.windowStart = s.start_ns;
        m.windowEnd = s.end_ns;
        m.wait = s.wait;
        for (size_t c = 0; c < dev.collectives.size(); ++c) {
            const CollectiveInstance& op = dev.collectives[c];
            if (op.step != 0) continue;
            ++m.operations;
            if (!op.bytes) continue;
            TimeNs start = op.start_ns;
            if (const auto it = lastArrival.find({static_cast<int>(d), static_cast<int>(c)}); it != lastArrival.end())
                start = std::max(start, it->second);
            m.bytes += *op.bytes;
            m.busBytes += static_cast<double>(*op.bytes) * busBandwidthFactor(op.collective, op.commSize);
            m.transferNs += std::max<TimeNs>(0, op.end_ns - start);
        }
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace osc::agent::live

#include "analyzer/crossrank/device_cross_rank.h"

#include "analyzer/metrics/bottleneck.h"
#include "analyzer/metrics/pipeline_bubble.h"

namespace osc::crossrank {

void shiftDeviceTimes(DeviceAnalysis& d, TimeNs by) {
    if (by == 0) return;
    for (auto& s : d.steps) {
        s.start_ns += by;
        s.end_ns += by;
    }
    for (auto& c : d.collectives) {
        c.start_ns += by;
        c.end_ns += by;
    }
    for (auto& i : d.exposed_wait_intervals) {
        i.start += by;
        i.end += by;
    }
}

void moveIdleGapMessage(Finding& f, TimeNs at, TimeNs by) {
    if (f.kind != FindingKind::IdleGap || by == 0) return;
    const std::string was = " at " + findingDuration(at) + ")";
    const size_t pos = f.message.find(was);
    if (pos != std::string::npos) f.message.replace(pos, was.size(), " at " + findingDuration(at + by) + ")");
}

void addPatternFindings(std::vector<Finding>& findings, const std::vector<Finding>& added, bool pipelineStage) {
    for (const auto& f : added) addFinding(findings, f);
    if (pipelineStage) notePipelineInFindings(findings);
}

void applyCrossRank(DeviceAnalysis& d, const DeviceCrossRank& cross) {
    if (cross.messageShift != 0) {
        const auto move = [&](std::vector<Finding>& findings) {
            for (auto& f : findings)
                if (f.at_ns) moveIdleGapMessage(f, *f.at_ns, cross.messageShift);
        };
        move(d.findings);
        for (auto& s : d.steps) move(s.bottleneck.findings);
    }
    shiftDeviceTimes(d, cross.shift);
    d.clock_shift_ns = cross.clockShift;
    d.wait = cross.wait;
    d.last_arrivals = cross.lastArrivals;
    d.delay_caused_ns = cross.delayCaused;
    d.exposed_wait_intervals = cross.exposedWait;
    for (size_t s = 0; s < d.steps.size(); ++s)
        d.steps[s].wait = cross.wait && s < cross.stepWait.size() ? std::optional(cross.stepWait[s]) : std::nullopt;
    const DeviceAnalysis* shell = cross.patterns;
    if (!shell) return;
    d.pipeline = shell->pipeline;
    d.alltoall = shell->alltoall;
    addPatternFindings(d.findings, shell->findings, shell->pipeline.has_value());
    for (size_t s = 0; s < d.steps.size() && s < shell->steps.size(); ++s) {
        auto& step = d.steps[s];
        const auto& from = shell->steps[s];
        step.pipeline = from.pipeline;
        step.alltoall = from.alltoall;
        addPatternFindings(step.bottleneck.findings, from.bottleneck.findings, from.pipeline.has_value());
    }
}

}  // namespace osc::crossrank

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

void addCrossRankFindings(std::vector<Finding>& findings, const std::vector<Finding>& patterns,
                          const std::vector<Finding>& engine, bool pipelineStage) {
    for (const auto& f : patterns) addFinding(findings, f);
    for (const auto& f : engine) addFinding(findings, f);
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
    for (size_t i = 0; i < d.collectives.size() && i < cross.bandwidth.size(); ++i) {
        auto& c = d.collectives[i];
        const OpBandwidth& b = cross.bandwidth[i];
        c.algbw_gbps = b.algbw_gbps;
        c.busbw_gbps = b.busbw_gbps;
        c.busbw_fraction = b.busbw_fraction;
        c.busbw_basis = b.basis;
    }
    d.busbw = cross.busbw;
    d.straggler = cross.straggler;
    static const std::vector<Finding> kNone;
    const DeviceAnalysis* shell = cross.patterns;
    if (shell) {
        d.pipeline = shell->pipeline;
        d.alltoall = shell->alltoall;
    }
    addCrossRankFindings(d.findings, shell ? shell->findings : kNone, cross.findings,
                         shell && shell->pipeline.has_value());
    for (size_t s = 0; s < d.steps.size(); ++s) {
        auto& step = d.steps[s];
        const StepAnalysis* from = shell && s < shell->steps.size() ? &shell->steps[s] : nullptr;
        if (from) {
            step.pipeline = from->pipeline;
            step.alltoall = from->alltoall;
        }
        addCrossRankFindings(step.bottleneck.findings, from ? from->bottleneck.findings : kNone,
                             s < cross.stepFindings.size() ? cross.stepFindings[s] : kNone,
                             from && from->pipeline.has_value());
    }
}

}  // namespace osc::crossrank

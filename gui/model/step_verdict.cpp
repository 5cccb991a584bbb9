#include "gui/model/step_verdict.h"

#include "gui/model/time_ticks.h"

namespace osc::gui {

const char* findingName(FindingKind kind) {
    switch (kind) {
        case FindingKind::CommOnComputeStream: return "comm on compute stream";
        case FindingKind::CommAfterLastCompute: return "comm after last compute";
        case FindingKind::ManySmallCollectives: return "many small collectives";
        case FindingKind::IdleGap: return "idle gaps";
        case FindingKind::CommunicationBound: return "communication-bound";
        case FindingKind::PipelineBubble: return "pipeline bubble";
        case FindingKind::AllToAllImbalance: return "all-to-all imbalance";
    }
    return "finding";
}

StepVerdict stepVerdict(const StepAnalysis& step) {
    StepVerdict v;
    const auto& findings = step.bottleneck.findings;
    if (!findings.empty() && findings.front().kind == FindingKind::IdleGap) v.text = "idle-bound";
    else if (step.bottleneck.communicationBound) v.text = "communication-bound";
    else if (step.metrics.comm_ns == 0) v.text = "no communication";
    else v.text = "compute-bound";
    if (!findings.empty()) {
        v.finding = std::string(findingName(findings.front().kind)) + " " + formatDuration(findings.front().exposed_ns);
        if (findings.size() > 1) v.finding += " (+" + std::to_string(findings.size() - 1) + ")";
    }
    for (const Finding& f : findings) v.details += (v.details.empty() ? "" : "\n") + f.message;
    return v;
}

}  // namespace osc::gui

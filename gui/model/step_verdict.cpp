#include "gui/model/step_verdict.h"

#include "analyzer/report/report_format.h"
#include "gui/model/time_ticks.h"

namespace osc::gui {

StepVerdict stepVerdict(const StepAnalysis& step) {
    StepVerdict v;
    v.text = report::stepVerdict(step);
    const auto& findings = step.bottleneck.findings;
    if (!findings.empty()) {
        v.finding = report::toString(findings.front().kind) + " " + formatDuration(findings.front().exposed_ns);
        if (findings.size() > 1) v.finding += " (+" + std::to_string(findings.size() - 1) + ")";
    }
    for (const Finding& f : findings) v.details += (v.details.empty() ? "" : "\n") + f.message;
    return v;
}

}  // namespace osc::gui

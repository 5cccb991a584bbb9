#include "gui/model/step_navigation.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace osc::gui {

std::vector<JobStep> jobSteps(const Analysis& analysis) {
    std::map<StepKey, JobStep> byKey;
    for (const DeviceAnalysis& d : analysis.devices) {
        const std::vector<StepKey> keys = stepKeys(d);
        for (size_t s = 0; s < d.steps.size(); ++s) {
            const StepAnalysis& step = d.steps[s];
            if (step.end_ns <= step.start_ns) continue;
            auto [it, fresh] = byKey.try_emplace(keys[s]);
            JobStep& j = it->second;
            if (fresh) {
                j.key = keys[s];
                j.window = {step.start_ns, step.end_ns};
            } else {
                j.window.start = std::min(j.window.start, step.start_ns);
                j.window.end = std::max(j.window.end, step.end_ns);
            }
            ++j.devices;
        }
    }
    std::vector<JobStep> out;
    out.reserve(byKey.size());
    for (auto& [key, step] : byKey) out.push_back(std::move(step));
    std::stable_sort(out.begin(), out.end(),
                     [](const JobStep& a, const JobStep& b) { return a.window.start < b.window.start; });
    return out;
}

std::optional<ViewRange> stepsSpan(const std::vector<JobStep>& steps) {
    if (steps.empty()) return std::nullopt;
    ViewRange r = steps.front().window;
    for (const JobStep& s : steps) {
        r.start = std::min(r.start, s.window.start);
        r.end = std::max(r.end, s.window.end);
    }
    return r;
}

ViewRange withMargin(ViewRange window, double margin) {
    const auto m = static_cast<TimeNs>(std::llround(static_cast<double>(window.length()) * margin));
    return {window.start - std::max<TimeNs>(1, m), window.end + std::max<TimeNs>(1, m)};
}

int stepAt(const std::vector<JobStep>& steps, TimeNs centre) {
    // Clock skew makes the windows of neighbouring steps overlap: among the
    // steps holding `centre`, the one whose middle is nearest, so that after
    // ] fitted step N+1 the view is in N+1, not still in the longer step N.
    int best = -1;
    TimeNs bestGap = 0, bestMid = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
        const ViewRange w = steps[i].window;
        const TimeNs gap = centre < w.start ? w.start - centre : centre >= w.end ? centre - w.end + 1 : 0;
        const TimeNs mid = w.start + w.length() / 2;
        const TimeNs midGap = mid > centre ? mid - centre : centre - mid;
        if (best < 0 || gap < bestGap || (gap == bestGap && midGap < bestMid)) {
            best = static_cast<int>(i);
            bestGap = gap;
            bestMid = midGap;
        }
    }
    return best;
}

int neighbourStep(const std::vector<JobStep>& steps, TimeNs centre, int direction) {
    if (steps.empty()) return -1;
    const int here = stepAt(steps, centre);
    const ViewRange w = steps[static_cast<size_t>(here)].window;
    const bool inside = centre >= w.start && centre < w.end;
    int to;
    if (inside)
        to = here + (direction > 0 ? 1 : -1);
    else if (direction > 0)
        to = centre < w.start ? here : here + 1;
    else
        to = centre >= w.end ? here : here - 1;
    return to >= 0 && to < static_cast<int>(steps.size()) ? to : -1;
}

}  // namespace osc::gui

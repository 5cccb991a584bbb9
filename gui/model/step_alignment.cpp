#include "gui/model/step_alignment.h"

#include <algorithm>

namespace osc::gui {

StepAlignment::StepAlignment(std::vector<ViewRange> aSteps, std::vector<ViewRange> bSteps) {
    const auto byStart = [](const ViewRange& x, const ViewRange& y) { return x.start < y.start; };
    std::stable_sort(aSteps.begin(), aSteps.end(), byStart);
    std::stable_sort(bSteps.begin(), bSteps.end(), byStart);
    const size_t n = std::min(aSteps.size(), bSteps.size());
    a_.assign(aSteps.begin(), aSteps.begin() + static_cast<std::ptrdiff_t>(n));
    b_.assign(bSteps.begin(), bSteps.begin() + static_cast<std::ptrdiff_t>(n));
}

int StepAlignment::stepAt(TimeNs a) const {
    if (a_.empty()) return -1;
    // The last step starting at or before `a`: the one holding it when
    // windows overlap (a slow rank's step N still running as step N+1 starts).
    const auto after =
        std::upper_bound(a_.begin(), a_.end(), a, [](TimeNs t, const ViewRange& s) { return t < s.start; });
    if (after == a_.begin()) return 0;
    const auto i = static_cast<size_t>(after - a_.begin()) - 1;
    if (a < a_[i].end || i + 1 == a_.size()) return static_cast<int>(i);
    // In the gap after step i: the nearer step, the earlier on a tie.
    return a_[i + 1].start - a < a - a_[i].end ? static_cast<int>(i + 1) : static_cast<int>(i);
}

TimeNs StepAlignment::offsetAt(TimeNs a) const {
    const int i = stepAt(a);
    if (i < 0) return 0;
    const auto k = static_cast<size_t>(i);
    return b_[k].start - a_[k].start;
}

ViewRange StepAlignment::viewInB(ViewRange a) const {
    const TimeNs by = offsetAt(a.start + a.length() / 2);
    return {a.start + by, a.end + by};
}

StepAlignment StepAlignment::inverse() const {
    StepAlignment out;
    out.a_ = b_;
    out.b_ = a_;
    return out;
}

}  // namespace osc::gui

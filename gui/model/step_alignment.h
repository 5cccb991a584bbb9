// Run B's timeline under run A's in the compare view, aligned by step (issue
// 30): step N of B starts at the same x as step N of A, whatever either run
// did before it. A plain value type, so the maths is tested without a window.
//
// A time inside A's step N maps to the same offset into B's step N. Outside
// every paired step (before the first, after the last, in a gap) the nearest
// step's offset applies, ties to the earlier step, so a view never jumps
// between two offsets while inside one step. A whole view moves by the
// offset under its centre and keeps its length: B shows A's zoom (the same
// ns per pixel), so durations compare by eye.
#pragma once

#include "gui/model/time_scale.h"

#include <vector>

namespace osc::gui {

class StepAlignment {
public:
    // Without paired steps each run keeps its own clock (offset 0): both
    // timelines start at their capture's first activity.
    StepAlignment() = default;
    // Step windows of each run; the k-th by start time pairs with the k-th,
    // as the compare tables pair step N with step N. The longer run's extra
    // steps pair with nothing (the nearest paired step's offset holds there).
    StepAlignment(std::vector<ViewRange> aSteps, std::vector<ViewRange> bSteps);

    size_t pairedSteps() const { return a_.size(); }
    // The paired step whose offset holds at A's time `a`; -1 without steps.
    int stepAt(TimeNs a) const;
    // B's time minus A's at A's time `a`.
    TimeNs offsetAt(TimeNs a) const;
    TimeNs toB(TimeNs a) const { return a + offsetAt(a); }
    // A's view as B shows it: moved by the offset at its centre.
    ViewRange viewInB(ViewRange a) const;
    // B to A: B's steps decide (for a view moved on B's timeline).
    StepAlignment inverse() const;

private:
    std::vector<ViewRange> a_, b_;  // paired steps only, by start
};

}  // namespace osc::gui

// Steps as the whole job ran them, for moving the view: step (name,
// occurrence) of every device as one window (earliest start to latest end,
// analyzer/metrics/step_keys.h), in time order. The first view of a capture
// fits its steps, not a launcher process or a long setup phase before them;
// [ and ] go to the previous and next step.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/step_keys.h"
#include "gui/model/time_scale.h"

#include <optional>
#include <vector>

namespace osc::gui {

struct JobStep {
    StepKey key;       // (name, occurrence)
    ViewRange window;  // over every device that ran it
    int devices = 0;   // how many ran it
};

// In time order (by start), one per (name, occurrence).
std::vector<JobStep> jobSteps(const Analysis& analysis);

// From the first step's start to the last one's end; nullopt without steps.
std::optional<ViewRange> stepsSpan(const std::vector<JobStep>& steps);

// A window with `margin` of its length on each side (what "fit" shows).
ViewRange withMargin(ViewRange window, double margin);

// The step a view centred at `centre` shows: the one holding it, else the
// nearest; -1 without steps.
int stepAt(const std::vector<JobStep>& steps, TimeNs centre);

// The step to go to from a view centred at `centre`: the next (direction
// > 0) or previous one; -1 when there is none that way.
int neighbourStep(const std::vector<JobStep>& steps, TimeNs centre, int direction);

}  // namespace osc::gui

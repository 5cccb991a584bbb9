// What the Steps table and the step details say about a step, taken from the
// analyzer (no GUI-side rules): its verdict flag and its findings, which the
// analyzer sorts by the time each explains, largest first. When that largest
// finding is the analyzer's idle-gap finding ("the GPU waited for the host"),
// the step is idle-bound: calling it compute-bound would hide that the GPU
// spent most of it doing nothing.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <string>

namespace osc::gui {

struct StepVerdict {
    std::string text;     // "idle-bound", "communication-bound", "compute-bound", "no communication"
    std::string finding;  // the largest finding, short: "idle gaps 8.1 ms", or ""
    std::string details;  // every finding's message, one per line
};

StepVerdict stepVerdict(const StepAnalysis& step);

// Short name of a finding kind, as the report's JSON spells it.
const char* findingName(FindingKind kind);

}  // namespace osc::gui

// What the Steps table and the step details say about a step, in the
// analyzer's own words (report_format's stepVerdict and finding names), so a
// step reads the same in the GUI as in `overlapscope report`. A mostly idle
// step is still "compute-bound" there, as in the report; its idle % and its
// largest finding ("idle-gap 7.5 ms") are what show the GPU did nothing.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <string>

namespace osc::gui {

struct StepVerdict {
    std::string text;     // "communication-bound", "compute-bound" or "no communication"
    std::string finding;  // the largest finding, short: "idle-gap 8.1 ms", or ""
    std::string details;  // every finding's message, one per line
};

StepVerdict stepVerdict(const StepAnalysis& step);

}  // namespace osc::gui

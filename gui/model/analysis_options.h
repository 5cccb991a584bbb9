// The analysis settings a user changes in the window (issue 40 item 6), as
// the command line has them: --step-pattern, --microbatch-pattern,
// --comm-kernel, --comm-copies, --pipeline-stages and --peak-busbw-gbps.
// Kept per file with its layout (as JSON, only what differs from the
// defaults), checked before a re-analysis (a bad regex is one line, as the
// command line says it), and, for each setting, what the analysis found with
// it: where a feature finds nothing, why.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

// The settings' window part, as JSON: the fields that differ from the
// defaults ("{}" for none). alignCollectives is not among them: View > Align
// clocks on collectives keeps it for every file.
std::string analysisOptionsJson(const AnalysisSettings& settings);
// `json`'s fields on top of `into`; false (and `into` unchanged) for text
// that is not such JSON.
bool applyAnalysisOptionsJson(const std::string& json, AnalysisSettings& into);

// Why the analyzer would refuse the settings ("invalid --comm-kernel pattern
// 'a(': ..."), or nullopt when it takes them.
std::optional<std::string> analysisOptionsError(const AnalysisSettings& settings);

// What the analysis of a capture found with each setting, in a sentence;
// where it found nothing, why and what to change.
struct AnalysisFindings {
    std::string steps;         // "12 steps on 2 devices", or "no range matches the step pattern: ..."
    std::string microbatches;  // "pipeline bubbles in 3 steps: 4 stages, 8 micro-batches", or why none
    std::string commKernels;   // per extra pattern, the kernels it matched; "" without patterns
    std::string stages;        // "from the capture: 4 stages", "4 (set)"
    std::string peak;          // the links' peaks, or the GPUs without one
    // Said under the Steps table: no steps, or no pipeline bubbles although
    // micro-batch settings were changed from the defaults.
    std::string stepsNote;
};

// `capture` may be null (partial results, saved reports): what needs the
// capture's names is then left out.
AnalysisFindings analysisFindings(const Capture* capture, const Analysis& analysis);

}  // namespace osc::gui

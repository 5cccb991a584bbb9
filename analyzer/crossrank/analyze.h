// The whole analysis of one loaded capture in memory: the per-device half
// (analyzer/metrics, analyzeProcesses) and the cross-rank half (engine.h).
// Reports of captures too large or too many to hold at once go through
// analyzer/job instead, which gives the same results.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <vector>

namespace osc {

// Throws std::invalid_argument for an invalid regex in the settings.
Analysis analyze(const Capture& capture, const AnalysisSettings& settings = {},
                 AnalysisDepth depth = AnalysisDepth::Full);
// The same, emptying `capture` once its devices are analysed: the cross-rank
// half reads only the analysis, and a one-file report's peak memory was the
// capture's tables held beside it.
Analysis analyze(Capture&& capture, const AnalysisSettings& settings = {}, AnalysisDepth depth = AnalysisDepth::Full);

// The cross-rank half over devices analysed in memory by analyzeProcesses:
// the summary, matching (collectives and point-to-point), --align
// collectives, waiting versus transfer, rank spread, pipeline bubbles,
// all-to-all. `processes` bounds processIndex.
void finishAnalysis(Analysis& a, const std::vector<DeviceIntervals>& intervalsOfDevice, size_t processes);

}  // namespace osc

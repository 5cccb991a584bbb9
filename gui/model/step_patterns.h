// What the Steps table and the step details say about a step's pipeline
// bubble (docs/metrics.md 7e) and all-to-all imbalance (7f), in the
// analyzer's numbers. A device step's pipeline metrics are its own
// (StepAnalysis::pipeline); its all-to-all imbalance is over the ranks, in
// Analysis::alltoall, found here by the step name and occurrence.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <string>
#include <vector>

namespace osc::gui {

// [device][step] -> index into Analysis::alltoall, or -1: the all-to-all
// step the analyzer filed under the same step key (name and occurrence,
// step_keys.h) where the device took part in an exchange.
std::vector<std::vector<int>> allToAllStepIndex(const Analysis& analysis);

// "58.2 % (27.3 %)": the stage's bubble share and, in brackets, the theory.
std::string bubbleShareText(const PipelineStageMetrics& m);
// The bubble in words: its length, share of the pipeline window against
// (S−1)/(M+S−1), and its split into fill, drain and stall.
std::string bubbleDetails(const PipelineStageMetrics& m);
// "stage 1 of 4, 8 micro-batches", and whether it is the slowest.
std::string stageText(const PipelineStageMetrics& m);

// The imbalance the analyzer judges by: bytes when every rank's are known,
// else transfer time; nullopt when neither is known.
std::optional<double> allToAllImbalance(const AllToAllStep& s);
// Whether it reaches the analyzer's AllToAllImbalance finding threshold.
bool allToAllImbalanced(const Analysis& analysis, const AllToAllStep& s);
// "1.33× bytes" or "1.5× time"; "" when unknown.
std::string imbalanceText(const AllToAllStep& s);
// Both imbalances, the overloaded rank against the mean, and the exchanges.
std::string imbalanceDetails(const Analysis& analysis, const AllToAllStep& s);
// One device's all-to-all in a window: operations, time, exposed, bytes.
std::string allToAllText(const AllToAllMetrics& m);

}  // namespace osc::gui

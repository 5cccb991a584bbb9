// The docs/design.md 4b/4c results in words: what overlap cost compute, how much
// of the exposed communication is waiting rather than transfer, and who
// arrives last. Shared by the text and Markdown reports.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/text_table.h"

#include <string>
#include <vector>

namespace osc::report {

// Sentences about one device, without its label; empty when nothing is known
// (no overlapped kernel with a baseline, one device, nothing exposed).
std::vector<std::string> costSentences(const DeviceAnalysis& d);

// "rank 3 arrived last at 41 of 60 collectives (18.0 ms of others' waiting)"
// for the device that arrived last most often; empty with fewer than two
// devices or no strict last arrival. Of each device only its identity,
// last arrivals and delay caused are read; of the matched collectives only
// how many there are.
std::string stragglerSentence(const std::vector<DeviceAnalysis>& devices, size_t matchedCount);
std::string stragglerSentence(const Analysis& a);
// "waiting unknown: 62 SendRecv kernels have no peer" (for !w.known()).
std::string waitUnknownSentence(const WaitTransferMetrics& w);
// "step time min/median/max: 1.20 ms / 1.31 ms / 1.52 ms", or the words for
// why it is unknown (no step name every device has).
std::string spreadStepTimeSentence(const RankSpread& s);

// --interference: per kernel signature, largest summed slowdown first.
TextTable interferenceTable(const DeviceAnalysis& d, size_t top);

}  // namespace osc::report

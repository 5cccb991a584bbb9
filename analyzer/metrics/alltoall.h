// All-to-all exchanges (docs/metrics.md section 7f): per step, bytes per rank
// pair where the rows or trace arguments give them, the imbalance over ranks
// (max / mean of bytes and of transfer time), exposed all-to-all time, and a
// finding naming the overloaded rank.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <vector>

namespace osc {

// Needs Analysis::matched with the all-to-all exchanges (matchAcrossDevices,
// matchPointToPoint) and intervalsOfDevice[d].exposed in the devices' final
// clocks. Fills Analysis::alltoall, StepAnalysis::alltoall,
// DeviceAnalysis::alltoall and the AllToAllImbalance findings.
void analyzeAllToAll(Analysis& a, const std::vector<DeviceIntervals>& intervalsOfDevice);

}  // namespace osc

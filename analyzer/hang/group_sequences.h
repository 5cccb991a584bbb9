// PyTorch profiler traces that name their collectives' process groups
// ("Process Group Name"): one communicator per process group, numbered by
// Seq over every collective type, as PyTorch numbers them on every member
// alike, or, in traces without Seq, by the group's calls in trace order.
// Internal to osc_hang (capture_sequences.cpp).
#pragma once

#include "analyzer/hang/rank_sequences.h"

#include <map>
#include <string>

namespace osc::hang {

// Adds `p`'s Process::groupCalls to `comms` (found by id, "pg <name>"), each
// group's calls on a copy of `base` (the rank, its host, its unfinished launches).
void addGroupCalls(const Capture& capture, const Process& p, const RankProgress& base,
                   std::map<std::string, CommunicatorProgress>& comms);

}  // namespace osc::hang

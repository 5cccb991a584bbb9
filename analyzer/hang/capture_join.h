// Captures and Flight Recorder dumps of one job, joined (internal to
// osc_hang). A capture's communicator is a dump's group when the calls of
// the same ranks line up: the same collective family entered within a short
// window after the dump's entry was created (PyTorch records the entry, then
// calls NCCL), or, for a PyTorch trace's process group of the same name, the
// same sequence number. The dump then says which call each rank is in, the
// capture what its GPU did with that call.
#pragma once

#include "analyzer/hang/hang.h"

namespace osc::hang {

// Marks each capture communicator (before `firstDumpGroup`) that is one of
// the dumps' groups (from `firstDumpGroup` on) with that group's id.
void joinCapturesToDumps(JobSequences& all, size_t firstDumpGroup);

// For each dump group with a hung call: what the joined capture says of
// each member's call there (a stuck member: of its first unfinished call).
std::vector<GpuState> gpuStatesAtHungCalls(const HangAnalysis& a);

}  // namespace osc::hang

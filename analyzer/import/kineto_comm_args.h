// PyTorch's collective arguments on NCCL kernels (torch.profiler traces of
// torch.distributed jobs) turned into the rows the NCCL profiler plugin
// would have written (OVERLAPSCOPE_NCCL_COLL): one Send or Recv row per peer,
// the peer in `root`, as NCCL keeps it. Only point-to-point calls (send,
// recv, and our grouped "coalesced" with split sizes) and all-to-all
// (all_to_all*, alltoall*) are turned into rows; docs/formats.md lists the
// mapping.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/import/kineto_event.h"

#include <cstdint>
#include <string>
#include <vector>

namespace osc::kineto {

// One kernel's arguments, kept until the process's own rank is known.
struct PendingComm {
    uint32_t device = 0;
    TimeNs start = 0, end = 0;
    CommArgs args;
};

// True when the arguments name a call this reader turns into rows.
bool describesSendsOrReceives(const CommArgs& args);

// Appends the rows of one kernel to `process.collectives` (times as given).
// `processRank` is the process's global rank (-1 unknown); "Process Group
// Ranks" maps group ranks to global ones (without it they are the same).
void appendCommRows(Process& process, StringTable& strings, const PendingComm& comm, int processRank);

// Parses "[1, 2, 3]" (PyTorch's list arguments); nullopt-like empty result
// with ok = false for anything else.
std::vector<int64_t> parseIntList(const std::string& text, bool& ok);

}  // namespace osc::kineto

// PyTorch's own numbering of collectives in profiler traces: "Process Group
// Name" and "Seq" on the record_param_comms / nccl:* operator that launched a
// collective, and often on its kernel. Both records of one call become one
// Process::groupCalls row; an operator finds its kernel through the launch
// calls it made (same thread, inside it, same correlation id as the kernel).
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/import/kineto_event.h"

#include <cstdint>
#include <vector>

namespace osc::kineto {

struct PendingGroupCall {
    uint64_t globalTid = 0;   // the operator's thread
    uint32_t device = kNoId;  // set for a kernel, kNoId for an operator
    TimeNs start = 0, end = 0;
    CommArgs args;
};

// True when the arguments number a collective PyTorch's way (a group and its
// Seq), sends and receives left out: PyTorch numbers those apart.
bool numbersCollective(const CommArgs& args);

// Appends the calls of `pending` (times already on the process's timeline)
// to `process.groupCalls`, one per (group, Seq). `processRank` is the
// process's global rank (-1 unknown), for its rank in each group.
void appendGroupCalls(Process& process, StringTable& strings, const std::vector<PendingGroupCall>& pending,
                      int processRank);

// Where every PyTorch trace of `capture` numbers each of its collectives by
// (group, Seq), their collective rows take that identity, as plugin rows have
// theirs: the group's communicator hash (that of its sends and receives,
// groupHash), Seq as the sequence number, the rank in the group and its size,
// the call's start as its enqueue time.
// Ranks are then matched by (group, Seq) wherever each trace begins. If any
// trace with NCCL collective kernels lacks it for one of them, every row
// keeps its order number: a mix of keys would match nothing.
void numberCollectivesBySeq(Capture& capture);

}  // namespace osc::kineto

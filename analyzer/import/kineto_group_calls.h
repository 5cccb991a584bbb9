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

// True when the arguments name a collective's process group (sends and
// receives left out: PyTorch numbers those apart). With "Seq" they also give
// its number in the group; without it (PyTorch 2.11 writes none), the
// calls of each group are numbered in the order the trace holds them.
bool namesGroupCollective(const CommArgs& args);

// Appends the calls of `pending` (times already on the process's timeline)
// to `process.groupCalls`, one per (group, Seq). `processRank` is the
// process's global rank (-1 unknown), for its rank in each group. When no
// record of the process carries a Seq, each group's operators (or, in a
// trace without them, its kernels) are numbered in start order instead: a
// process group's Seq counts its collectives in the order they are issued,
// so traces that start at the same step number them alike.
void appendGroupCalls(Process& process, StringTable& strings, const std::vector<PendingGroupCall>& pending,
                      int processRank);

// Where every collective row of the processes from `firstProcess` on (one
// trace file's) has its group call, the rows take that identity, as plugin
// rows have theirs: the group's communicator hash (that of its sends and
// receives, groupHash), Seq (or the group order) as the sequence number, the
// rank in the group and its size, the call's start as its enqueue time.
// Ranks are then matched by (group, Seq) wherever each trace begins (by
// (group, order) where Seq was missing: from where each trace begins). If a
// collective kernel of those processes has no group call, every row keeps
// its order number. Decided per trace file: the report reads files one at a
// time, and a job's traces come from one PyTorch, so they have the same keys.
void numberCollectivesBySeq(Capture& capture, size_t firstProcess);

}  // namespace osc::kineto

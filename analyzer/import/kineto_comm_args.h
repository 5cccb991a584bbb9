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
#include <string_view>
#include <vector>

namespace osc::kineto {

// One kernel's arguments, kept until the process's own rank is known.
struct PendingComm {
    uint32_t device = 0;
    TimeNs start = 0, end = 0;
    CommArgs args;
};

// One communicator id from PyTorch's process group name (else its rank
// list), the same on every rank.
uint64_t groupHash(const std::string& name);

// What identifies a call's process group on every rank: "Process Group
// Name", else (old traces) its member list.
const std::string& groupOf(const CommArgs& args);

// A call's process group as its arguments describe it: the members ("Process
// Group Ranks", see parseIntList) and the size ("Group size", else the
// complete list's length; -1 unknown).
struct GroupMembers {
    std::vector<int64_t> ranks;
    bool listed = false, truncated = false;
    int64_t size = -1;
};
GroupMembers groupMembersOf(const CommArgs& args);

// True for a single send or receive, which PyTorch numbers apart from the
// group's collectives.
bool isSendOrRecv(const CommArgs& args);

// The elements NCCL counts for a collective (`func`, NCCL's name): a
// reduce-scatter's output, anything else's input; -1 when absent or past any
// real message.
int64_t ncclElementsOf(const CommArgs& args, std::string_view func);

// A collective row made from PyTorch's arguments, on its kernel's device and
// times: no plugin identity (commHash 0, numbered in row order), no algorithm.
void appendArgsRow(CollectiveTable& table, StringTable& strings, uint32_t func, uint32_t dtype, uint64_t elements,
                   uint64_t bytes, int32_t rank, int32_t nranks, uint32_t device, TimeNs start, TimeNs end);

// True when the arguments name a call this reader turns into rows.
bool describesSendsOrReceives(const CommArgs& args);

// Appends the rows of one kernel to `process.collectives` (times as given).
// `processRank` is the process's global rank (-1 unknown); "Process Group
// Ranks" maps group ranks to global ones (without it they are the same).
void appendCommRows(Process& process, StringTable& strings, const PendingComm& comm, int processRank);

// Parses "[1, 2, 3]" (PyTorch's list arguments); nullopt-like empty result
// with ok = false for anything else. With `truncated`, also PyTorch's cut
// form of lists over 30 entries, "[0, 1, ..., 29, ...]": the kept prefix,
// and *truncated set; without it such a list is not ok (split sizes).
std::vector<int64_t> parseIntList(const std::string& text, bool& ok, bool* truncated = nullptr);

// The group rank of a global rank from "Process Group Ranks": its place in
// the list; an empty complete list means group ranks are global ones. In a
// truncated list (only its prefix known) a rank past the prefix is found only
// when the prefix is evenly spaced, extended up to `groupSize`; else -1.
int64_t groupRankOf(const std::vector<int64_t>& members, bool truncated, int64_t groupSize, int64_t global);

}  // namespace osc::kineto

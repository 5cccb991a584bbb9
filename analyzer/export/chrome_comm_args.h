// What `overlapscope export` writes on a communication kernel that NCCL
// plugin rows describe: PyTorch's own argument names ("Collective name",
// "Dst Rank", "In split size", "In msg nelems", "Group size", ...), so that
// the trace reads back (in overlapscope, or in tools that read PyTorch
// traces) with its point-to-point pairs, all-to-all bytes and collective
// sizes (docs/formats.md).
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/classify.h"

#include <map>
#include <string>
#include <unordered_map>

namespace osc {

// (communicator hash, rank in it) -> the process's rank, over the capture.
using GlobalRanks = std::map<std::pair<uint64_t, int32_t>, int>;
GlobalRanks globalRanksOf(const Capture& capture);

// Kernel index -> the argument text to append inside the kernel's "args"
// (starting with ", "), for the device's kernels whose rows are sends or
// receives, or a sized collective PyTorch describes (AllReduce, AllGather,
// ReduceScatter, Broadcast, Reduce). Empty when the process has no rows.
std::unordered_map<size_t, std::string> commKernelArgs(const Capture& capture, const Process& process,
                                                       const Device& device, ActivityClassifier& classifier,
                                                       const GlobalRanks& ranks);

}  // namespace osc

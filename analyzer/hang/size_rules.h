// Which sizes a collective needs to be equal on every rank, and the
// comparison of one call as each rank entered it (hang_analysis.cpp's
// desyncs). A desync is a different collective, datatype, or size where the
// collective needs equal sizes: all-reduce, broadcast, reduce, all-gather
// and reduce-scatter (the inputs), gather (the inputs), scatter (the
// outputs). An all-to-all's sizes differ per rank by design (a
// mixture-of-experts step sends each peer what its tokens need): never a
// desync, only said when every member's totals are known and what all send
// is not what all receive. A collective whose rule is not known here is said
// as uncertain, never called a desync.
#pragma once

#include "analyzer/hang/rank_sequences.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace osc::hang {

enum class SizeRule { EqualInputs, EqualOutputs, Free, Unknown };

// "allreduce", "allgather", "reducescatter", "broadcast", "reduce",
// "alltoall", "gather", "scatter", "barrier", or "" when the name is none
// of these: PyTorch's, NCCL's and the profiler's names alike
// ("_allgather_base", "AllGather", "all_gather_into_tensor_coalesced").
std::string collectiveFamily(std::string_view collective);
SizeRule sizeRuleOf(std::string_view collective);

struct SizeVerdict {
    std::string field;  // "collective", "dtype", "bytes"; "" when the calls agree
    bool uncertain = false;
    std::string note;  // why an uncertain one may be right
};

// The calls ranks made at one place of `comm` (member, call), two or more.
SizeVerdict compareCalls(const std::vector<std::pair<int, const Call*>>& calls, const CommunicatorProgress& comm);

}  // namespace osc::hang

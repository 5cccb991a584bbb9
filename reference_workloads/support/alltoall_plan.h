// Expert parallelism: one expert per rank, every token routed to one expert
// (top-1). Rank `src` holds tokens[src] tokens; its i-th token goes to expert
// (src + i) mod world, and the tokens are stored grouped by destination
// (segment dst holds the counts[src][dst] tokens for expert dst), so the
// dispatch sends contiguous segments. --imbalance F gives rank 0 F times as
// many tokens as the others: every expert then receives more from rank 0,
// and rank 0's sends (dispatch) and receives (combine) are the large ones.
//
// Chunks (the overlapped schedule): every segment is cut into `chunks`
// pieces (chunk_range), and chunk c's all-to-all moves piece c of every
// segment. A destination stores what it receives chunk by chunk, each
// chunk's block holding the sources' pieces in rank order, so the expert's
// GEMMs run on one contiguous block per chunk; the combine sends each piece
// back to where it came from.
#pragma once

#include <vector>

#include "reference_workloads/support/chunk_schedule.h"

namespace oscwl {

struct AllToAllPlan {
    int world = 1;
    int chunks = 1;
    std::vector<long long> tokens;               // per source rank
    std::vector<std::vector<long long>> counts;  // [src][dst]

    // Tokens src routes to expert dst precede those routed to dst + 1.
    long long segment_offset(int src, int dst) const;
    // Chunk c of segment (src, dst), relative to the segment.
    ChunkRange piece(int src, int dst, int c) const;
    long long received(int dst) const;                     // tokens expert dst processes per step
    long long block_tokens(int dst, int c) const;          // of chunk c, from every source
    long long block_offset(int dst, int c) const;          // in dst's receive buffer
    long long recv_offset(int dst, int c, int src) const;  // where src's piece of chunk c lands on dst
    // Max over mean of the tokens each rank sends in the dispatch (1: balanced).
    double send_imbalance() const;
};

// std::invalid_argument for world < 1, tokens < 1, imbalance < 1 or chunks < 1.
AllToAllPlan plan_alltoall(int world, long long tokens, double imbalance, int chunks);

}  // namespace oscwl

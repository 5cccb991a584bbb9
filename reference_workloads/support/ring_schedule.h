// Ring-exchange tensor parallelism (Transformer Engine's "userbuffers"
// collective GEMMs): instead of an all-gather before the column-parallel GEMM
// and a reduce-scatter after the row-parallel one, the chunks travel around a
// ring with point-to-point send/receive while each rank computes on the
// chunk it holds.
//   gather ring, step i: GEMM on the held chunk gather_order[i]; meanwhile
//     send it to `next` and receive gather_order[i+1] from `prev`.
//   scatter ring, step k: partial product of chunk scatter_order[k], plus the
//     partial sum received from `prev`, sent on to `next`; the last step's
//     chunk is the rank's own and its sum is the output.
// Each ring makes positions - 1 exchanges. With one rank there is no one to
// exchange with, so the rank's tokens are cut into `chunks` slices that play
// the ring positions and every exchange is a send to itself (loopback): the
// same schedule and bytes, with the copies or NCCL's self send standing in.
#pragma once

#include <vector>

namespace oscwl {

struct RingPlan {
    int positions = 1;  // world size, or `chunks` slices of this rank's tokens (loopback)
    bool loopback = false;
    int next = 0, prev = 0;          // ranks this one sends to and receives from
    std::vector<int> gather_order;   // chunk held (and multiplied) at each gather step
    std::vector<int> scatter_order;  // chunk whose partial product is computed at each scatter step
    int exchanges_per_ring() const { return positions - 1; }
};

// world > 1: a ring of the ranks (chunks is ignored); world == 1: loopback
// with `chunks` positions.
RingPlan plan_ring(int world, int rank, int chunks);

}  // namespace oscwl

// The tensor-parallel block's issue order. With N chunks the host issues
//   AG0 .. AG(N-1), then for each chunk c: GEMM(c) [waits AG(c)], RS(c) [waits GEMM(c)]
// on two streams (communication, compute). The gathers need only the local
// shard, so queueing them all first lets GEMM(c) run while AG(c+1) moves the
// next chunk, and RS(c) then runs while a later chunk's GEMM computes.
// (Interleaving AG(c+1), RS(c), AG(c+2), ... on one stream looks natural but
// leaves AG(c+2) stuck behind RS(c), which waits for GEMM(c): the last
// gather then overlaps nothing. The unit test catches that.) One
// communicator serialises its collectives, so one communication stream is
// all NCCL can use here. N == 1 is the serial schedule.
#pragma once

#include <vector>

namespace oscwl {

enum class TpOp { all_gather, gemm, reduce_scatter };
enum class StreamRole { compute = 0, comm = 1 };

struct ScheduledOp {
    TpOp op;
    int chunk;
    StreamRole stream;
    int waits_for;  // index (in the schedule) of an op on the other stream, or -1
};

std::vector<ScheduledOp> plan_tp_chunks(int chunks);

// The slice [offset, offset + count) of `total` items that chunk `c` of
// `chunks` owns; chunks are equal when total divides evenly, else the first
// (total % chunks) chunks get one more.
struct ChunkRange {
    long long offset;
    long long count;
};
ChunkRange chunk_range(long long total, int chunks, int c);

// Start/end times of each op when every op of a kind takes the given time,
// each stream runs its ops in issue order and waits are honoured: a model
// of the GPU timeline that the unit tests check the schedule against.
struct SimulatedOp {
    double start;
    double end;
};
std::vector<SimulatedOp> simulate(const std::vector<ScheduledOp>& schedule, double gather_time, double gemm_time,
                                  double scatter_time);

}  // namespace oscwl

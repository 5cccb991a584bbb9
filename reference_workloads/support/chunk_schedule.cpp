#include "reference_workloads/support/chunk_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace oscwl {

std::vector<ScheduledOp> plan_tp_chunks(int chunks) {
    if (chunks < 1) throw std::invalid_argument("plan_tp_chunks: chunks must be >= 1");
    std::vector<ScheduledOp> ops;
    for (int c = 0; c < chunks; ++c) ops.push_back({TpOp::all_gather, c, StreamRole::comm, -1});
    for (int c = 0; c < chunks; ++c) {
        const int gemm = static_cast<int>(ops.size());
        ops.push_back({TpOp::gemm, c, StreamRole::compute, c});  // AG(c) is op c
        ops.push_back({TpOp::reduce_scatter, c, StreamRole::comm, gemm});
    }
    return ops;
}

ChunkRange chunk_range(long long total, int chunks, int c) {
    const long long base = total / chunks;
    const long long extra = total % chunks;
    const long long offset = c * base + std::min<long long>(c, extra);
    return {offset, base + (c < extra ? 1 : 0)};
}

std::vector<SimulatedOp> simulate(const std::vector<ScheduledOp>& schedule, double gather_time, double gemm_time,
                                  double scatter_time) {
    std::vector<SimulatedOp> out(schedule.size());
    double stream_free[2] = {0.0, 0.0};
    for (std::size_t i = 0; i < schedule.size(); ++i) {
        const ScheduledOp& op = schedule[i];
        const int s = static_cast<int>(op.stream);
        double start = stream_free[s];
        if (op.waits_for >= 0) start = std::max(start, out[static_cast<std::size_t>(op.waits_for)].end);
        const double d = op.op == TpOp::all_gather ? gather_time : op.op == TpOp::gemm ? gemm_time : scatter_time;
        out[i] = {start, start + d};
        stream_free[s] = start + d;
    }
    return out;
}

}  // namespace oscwl

#include "reference_workloads/support/alltoall_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace oscwl {

AllToAllPlan plan_alltoall(int world, long long tokens, double imbalance, int chunks) {
    if (world < 1 || tokens < 1 || chunks < 1 || !(imbalance >= 1.0))
        throw std::invalid_argument("plan_alltoall: needs world, tokens and chunks >= 1 and imbalance >= 1");
    AllToAllPlan p;
    p.world = world;
    p.chunks = chunks;
    for (int r = 0; r < world; ++r)
        p.tokens.push_back(r == 0 ? std::llround(imbalance * static_cast<double>(tokens)) : tokens);
    for (int src = 0; src < world; ++src) {
        const long long n = p.tokens[static_cast<std::size_t>(src)];
        std::vector<long long> row;
        for (int dst = 0; dst < world; ++dst) {
            // Tokens i in [0, n) with (src + i) mod world == dst: i = k*world + shift.
            const int shift = ((dst - src) % world + world) % world;
            row.push_back(n / world + (shift < n % world ? 1 : 0));
        }
        p.counts.push_back(row);
    }
    return p;
}

long long AllToAllPlan::segment_offset(int src, int dst) const {
    const auto& row = counts.at(static_cast<std::size_t>(src));
    return std::accumulate(row.begin(), row.begin() + dst, 0LL);
}

ChunkRange AllToAllPlan::piece(int src, int dst, int c) const {
    return chunk_range(counts.at(static_cast<std::size_t>(src)).at(static_cast<std::size_t>(dst)), chunks, c);
}

long long AllToAllPlan::received(int dst) const {
    long long n = 0;
    for (int src = 0; src < world; ++src) n += counts[static_cast<std::size_t>(src)].at(static_cast<std::size_t>(dst));
    return n;
}

long long AllToAllPlan::block_tokens(int dst, int c) const {
    long long n = 0;
    for (int src = 0; src < world; ++src) n += piece(src, dst, c).count;
    return n;
}

long long AllToAllPlan::block_offset(int dst, int c) const {
    long long off = 0;
    for (int k = 0; k < c; ++k) off += block_tokens(dst, k);
    return off;
}

long long AllToAllPlan::recv_offset(int dst, int c, int src) const {
    long long off = block_offset(dst, c);
    for (int s = 0; s < src; ++s) off += piece(s, dst, c).count;
    return off;
}

double AllToAllPlan::send_imbalance() const {
    const long long most = *std::max_element(tokens.begin(), tokens.end());
    const double mean = static_cast<double>(std::accumulate(tokens.begin(), tokens.end(), 0LL)) / world;
    return static_cast<double>(most) / mean;
}

}  // namespace oscwl

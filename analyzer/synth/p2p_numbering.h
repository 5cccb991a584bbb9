// Send/Recv rows' seqNumber as the agent's NCCL plugin writes it
// (docs/capture-format.md, OVERLAPSCOPE_NCCL_COLL): per rank, communicator,
// peer and direction, from 0, so that the k-th send of rank A to rank B and
// the k-th receive of B from A carry the same number, as the analyzer's
// pairing expects (docs/metrics.md 7d).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

namespace osc::synth {

class P2pNumbering {
public:
    uint64_t next(int rank, uint64_t commHash, int peer, bool send) { return calls_[{rank, commHash, peer, send}]++; }

private:
    std::map<std::tuple<int, uint64_t, int, bool>, uint64_t> calls_;
};

}  // namespace osc::synth

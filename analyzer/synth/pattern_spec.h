// The models of the other parallelism patterns (README.md in this folder
// works out their answers): a 1F1B pipeline whose bubble is known, and an
// expert-parallel all-to-all whose imbalance is known.
#pragma once

#include "analyzer/capture/model.h"

#include <cstdint>
#include <string>

namespace osc::synth {

// Pipeline parallelism, one rank per stage, 1F1B schedule (PipeDream-Flush /
// Megatron): stage s runs min(S-s-1, M) forwards, then one forward and one
// backward in turn, then the remaining backwards.
struct PipelineSpec {
    int stages = 4;
    int microbatches = 8;
    int steps = 3;
    TimeNs forwardNs = 500'000;  // per micro-batch and stage
    TimeNs backwardNs = 1'000'000;
    // Time to move an activation or gradient once both sides are there; 0
    // gives the textbook bubble (S-1)/(M+S-1) exactly.
    TimeNs transferNs = 0;
    uint64_t activationBytes = 16ull << 20;  // bytes per send, for the NCCL plugin rows
    // One slow stage: its forward and backward take this many times longer.
    int slowStage = -1;
    double slowFactor = 1.0;
    TimeNs stepGapNs = 100'000;
    std::string host = "synth-host";
    int64_t basePid = 4000;

    void validate() const;  // throws std::invalid_argument naming the bad option
    TimeNs forwardOf(int stage) const;
    TimeNs backwardOf(int stage) const;
};

// Expert parallelism: per step, a gate kernel, the dispatch all-to-all, the
// expert GEMM, the combine all-to-all (the dispatch reversed) and an output
// kernel, each all-to-all one grouped send/receive (one SendRecv kernel per
// rank) to every other rank.
struct AllToAllSpec {
    int ranks = 4;
    int steps = 3;
    TimeNs gateNs = 200'000, expertNs = 1'000'000, combineNs = 200'000;
    uint64_t pairBytes = 4ull << 20;  // what each rank sends each other rank
    // Every rank sends `imbalance` times pairBytes to `hotRank` in the
    // dispatch, and gets as much back in the combine.
    double imbalance = 1.0;
    int hotRank = 0;
    // A rank's exchange takes alpha + max(bytes out, bytes in) / bandwidth
    // after the last rank has arrived (its links are full duplex).
    TimeNs alphaNs = 20'000;
    double bandwidthGBps = 25.0;
    TimeNs stepGapNs = 100'000;
    std::string host = "synth-host";
    int64_t basePid = 4000;

    void validate() const;
    uint64_t hotBytes() const;  // round(imbalance * pairBytes)
    TimeNs exchangeNs(uint64_t bytes) const;
};

}  // namespace osc::synth

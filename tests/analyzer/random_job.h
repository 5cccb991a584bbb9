// Random jobs for the tests that compare two ways of analysing the same
// files (streaming, partial + merge, binary parts): data parallel (layers,
// steps, overlap mode, arrival skew and clock offsets per rank), 1F1B
// pipelines and expert-parallel all-to-all, all drawn from `rng`.
#pragma once

#include "analyzer/synth/pattern_spec.h"
#include "analyzer/synth/workload_spec.h"

#include <random>

namespace osc::test {

inline synth::WorkloadSpec randomJob(std::mt19937& rng, int minRanks = 2, int maxRanks = 7) {
    synth::WorkloadSpec s;
    s.ranks = std::uniform_int_distribution<int>(minRanks, maxRanks)(rng);
    s.layers = std::uniform_int_distribution<int>(2, 6)(rng);
    s.steps = std::uniform_int_distribution<int>(1, 3)(rng);
    s.mode = static_cast<synth::OverlapMode>(std::uniform_int_distribution<int>(0, 2)(rng));
    s.jitter = 0.2;
    s.seed = rng();
    s.interference = 1.1;
    for (int r = 0; r < s.ranks; ++r) {
        s.arrivalSkewNs.push_back(std::uniform_int_distribution<TimeNs>(0, 300'000)(rng));
        s.clockOffsetNs.push_back(std::uniform_int_distribution<TimeNs>(-200'000, 200'000)(rng));
    }
    // Why a rank is late (docs/design.md 4d): its host busy loading data, or
    // its compute slower.
    if (std::bernoulli_distribution(0.5)(rng)) {
        s.hostStallRank = std::uniform_int_distribution<int>(0, s.ranks - 1)(rng);
        s.hostStallNs = std::uniform_int_distribution<TimeNs>(100'000, 3'000'000)(rng);
    }
    if (std::bernoulli_distribution(0.3)(rng)) {
        s.slowComputeRank = std::uniform_int_distribution<int>(0, s.ranks - 1)(rng);
        s.slowComputeFactor = std::uniform_real_distribution<double>(1.05, 1.5)(rng);
    }
    return s;
}

// A 1F1B pipeline: stages, micro-batches, a slow stage now and then (its
// bubble finding), transfer time or none.
inline synth::PipelineSpec randomPipeline(std::mt19937& rng) {
    synth::PipelineSpec s;
    s.stages = std::uniform_int_distribution<int>(2, 5)(rng);
    s.microbatches = std::uniform_int_distribution<int>(1, 6)(rng);
    s.steps = std::uniform_int_distribution<int>(1, 3)(rng);
    s.forwardNs = std::uniform_int_distribution<TimeNs>(50'000, 400'000)(rng);
    s.backwardNs = std::uniform_int_distribution<TimeNs>(50'000, 800'000)(rng);
    s.transferNs = std::bernoulli_distribution(0.5)(rng) ? std::uniform_int_distribution<TimeNs>(1, 150'000)(rng) : 0;
    s.activationBytes = std::uniform_int_distribution<uint64_t>(1, 64)(rng) << 16;
    if (std::bernoulli_distribution(0.6)(rng)) {
        s.slowStage = std::uniform_int_distribution<int>(0, s.stages - 1)(rng);
        s.slowFactor = std::uniform_real_distribution<double>(1.2, 3.0)(rng);
    }
    return s;
}

// Expert parallelism: grouped sends and receives to every other rank, one
// rank taking more at times (its imbalance finding).
inline synth::AllToAllSpec randomAllToAll(std::mt19937& rng) {
    synth::AllToAllSpec s;
    s.ranks = std::uniform_int_distribution<int>(3, 6)(rng);
    s.steps = std::uniform_int_distribution<int>(1, 3)(rng);
    s.gateNs = std::uniform_int_distribution<TimeNs>(10'000, 300'000)(rng);
    s.expertNs = std::uniform_int_distribution<TimeNs>(100'000, 1'500'000)(rng);
    s.pairBytes = std::uniform_int_distribution<uint64_t>(1, 64)(rng) << 16;
    s.imbalance = std::bernoulli_distribution(0.6)(rng) ? std::uniform_real_distribution<double>(1.0, 4.0)(rng) : 1.0;
    s.hotRank = std::uniform_int_distribution<int>(0, s.ranks - 1)(rng);
    return s;
}

}  // namespace osc::test

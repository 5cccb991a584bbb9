// A random data-parallel job for the tests that compare two ways of analysing
// the same files (streaming, partial + merge): layers, steps, overlap mode,
// arrival skew and clock offsets per rank all drawn from `rng`.
#pragma once

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
    return s;
}

}  // namespace osc::test

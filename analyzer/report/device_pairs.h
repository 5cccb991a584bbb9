// Which device of one run is which device of another (`check --baseline`,
// `diff`): matched by rank and GPU; without ranks, by their order among the
// devices on the same GPU, since process ids change from run to run.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <vector>

namespace osc::report {

struct DevicePair {
    int base = -1, candidate = -1;  // indices into each run's devices; -1: only in the other run
};

// Ordered by (rank, GPU, occurrence).
std::vector<DevicePair> pairDevices(const Analysis& base, const Analysis& candidate);

}  // namespace osc::report

// Seeded duration noise. Own arithmetic on top of mt19937_64 (whose output is
// fixed by the standard) rather than std::uniform_real_distribution (whose
// output is not), so the committed example captures regenerate identically.
#pragma once

#include "analyzer/capture/model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace osc::synth {

class Jitter {
public:
    Jitter(uint64_t seed, double fraction) : rng_(seed), fraction_(fraction) {}

    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
    uint64_t next() { return rng_(); }

    // `ns` scaled by 1 + U(-fraction, +fraction); never below 1 ns.
    TimeNs apply(TimeNs ns) {
        if (fraction_ <= 0) return std::max<TimeNs>(ns, 1);
        const double scale = 1.0 + fraction_ * (2.0 * uniform() - 1.0);
        return std::max<TimeNs>(static_cast<TimeNs>(std::llround(static_cast<double>(ns) * scale)), 1);
    }

private:
    std::mt19937_64 rng_;
    double fraction_;
};

}  // namespace osc::synth

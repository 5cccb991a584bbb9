// How far one sample lies above another, with no assumption about the shape
// of either: the Hodges-Lehmann shift (the median of every candidate - base
// difference) and the distribution-free interval around it that inverts the
// Mann-Whitney test (docs/metrics.md section 10). Used by `check --baseline`
// and `diff` on per-step values, so run-to-run noise is judged by the noise
// the steps themselves show. Exact, so the same inputs always give the same
// interval: no resampling, no random numbers.
#pragma once

#include "analyzer/capture/model.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace osc::report {

// P(U <= u) for the Mann-Whitney U (pairs with the candidate value below the
// base value) of samples of n and m values when both come from one
// continuous distribution. Exact while min(n, m) * n * m <=
// kExactMannWhitneyWork (300 steps each; a few ms), else the normal
// approximation with a continuity correction, close by then also in the
// far tail a Bonferroni level reaches.
inline constexpr size_t kExactMannWhitneyWork = 27'000'000;
double mannWhitneyCdf(size_t n, size_t m, long long u);

// The standard normal quantile: x with P(Z <= x) = p, 0 < p < 1.
double normalQuantile(double p);

// The order k (1-based) of the n * m differences that bounds a two-sided
// interval at `confidence`: the largest k with P(U <= k - 1) <= (1 -
// confidence) / 2, so that [d(k), d(nm + 1 - k)] covers the true shift with
// at least that probability. 0 when no k qualifies (too few values).
long long confidenceOrder(size_t n, size_t m, double confidence);

struct ShiftInterval {
    double shift = 0;          // Hodges-Lehmann: median of candidate - base over all pairs
    double low = 0, high = 0;  // the interval at the confidence asked for
};

// nullopt when the samples are too small for an interval at `confidence`.
std::optional<ShiftInterval> shiftInterval(std::vector<TimeNs> base, std::vector<TimeNs> candidate, double confidence);
// The same with the order k of confidenceOrder given (callers comparing
// many samples of the same sizes find it once); nullopt for k < 1.
std::optional<ShiftInterval> shiftIntervalAt(std::vector<TimeNs> base, std::vector<TimeNs> candidate, long long k);

}  // namespace osc::report

// The cost of one gradient collective as a straight line in its size:
// duration = alpha_ns + ns_per_byte * bytes, fitted by least squares on the
// capture's own (bytes, duration) pairs (docs/metrics.md "What-if").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace osc::whatif {

struct CostSample {
    double bytes = 0;
    double ns = 0;
};

struct CostModel {
    double alpha_ns = 0;
    double ns_per_byte = 0;
    int samples = 0;
    int distinctSizes = 0;
    std::optional<double> r2;  // of the final line on the samples; null with fewer than 2 sizes
    // How alpha was set: "fit" (least squares), "default" (fewer than two
    // distinct sizes), "given" (--alpha-ns), "zero" (the fit gave a negative
    // intercept and was redone through the origin).
    std::string alphaSource = "fit";

    // Predicted duration of a collective of `bytes`, rounded to whole ns.
    int64_t costNs(double bytes) const;
};

// `givenAlphaNs` fixes alpha (then only ns_per_byte is fitted);
// `defaultAlphaNs` is used when the samples hold fewer than two distinct
// sizes, so that the line's intercept cannot be told from its slope.
// Throws std::invalid_argument when there is no sample with bytes > 0.
CostModel fitCost(const std::vector<CostSample>& samples, double defaultAlphaNs,
                  std::optional<double> givenAlphaNs = std::nullopt);

// The default alpha when the fit cannot find one: a small-message NCCL
// all-reduce or a pair of small host<->device copies costs about this much
// on current hardware (documented in docs/metrics.md).
inline constexpr double kDefaultAlphaNs = 10'000.0;

}  // namespace osc::whatif

#include "analyzer/synth/pattern_spec.h"

#include <cmath>
#include <stdexcept>

namespace osc::synth {
namespace {

void require(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("synth: ") + what);
}

constexpr TimeNs kMaxDurationNs = TimeNs{1} << 40;  // 18 minutes: sums of many stay far from 2^62

}  // namespace

void PipelineSpec::validate() const {
    require(stages >= 2 && stages <= 256, "--stages must be between 2 and 256");
    require(microbatches >= 1 && microbatches <= 4096, "--microbatches must be between 1 and 4096");
    require(steps >= 1 && steps <= 100'000, "--steps must be between 1 and 100000");
    require(static_cast<int64_t>(stages) * microbatches * steps <= 20'000'000,
            "--stages x --microbatches x --steps must stay under 20 million");
    require(forwardNs >= 1 && forwardNs <= kMaxDurationNs && backwardNs >= 1 && backwardNs <= kMaxDurationNs,
            "--forward-ns and --backward-ns must be between 1 and 2^40");
    require(transferNs >= 0 && transferNs <= kMaxDurationNs, "--transfer-ns must be between 0 and 2^40");
    require(slowStage >= -1 && slowStage < stages, "--slow-stage must name a stage (0 .. stages-1)");
    require(slowFactor >= 1 && slowFactor <= 100, "--slow-factor must be between 1 and 100");
    require(stepGapNs >= 0 && stepGapNs <= kMaxDurationNs, "--step-gap-ns must be between 0 and 2^40");
    require(!host.empty(), "--host must not be empty");
    require(basePid > 0 && basePid + stages < (1 << 24), "--pid must be positive and below 2^24");
}

TimeNs PipelineSpec::forwardOf(int stage) const {
    return stage == slowStage ? static_cast<TimeNs>(std::llround(static_cast<double>(forwardNs) * slowFactor))
                              : forwardNs;
}

TimeNs PipelineSpec::backwardOf(int stage) const {
    return stage == slowStage ? static_cast<TimeNs>(std::llround(static_cast<double>(backwardNs) * slowFactor))
                              : backwardNs;
}

void AllToAllSpec::validate() const {
    require(ranks >= 3 && ranks <= 256, "--ranks must be between 3 and 256 for the all-to-all model");
    require(steps >= 1 && steps <= 100'000, "--steps must be between 1 and 100000");
    require(gateNs >= 0 && expertNs >= 1 && combineNs >= 0 && gateNs <= kMaxDurationNs && expertNs <= kMaxDurationNs &&
                combineNs <= kMaxDurationNs,
            "--gate-ns, --expert-ns and --combine-ns must be between 0 (1 for --expert-ns) and 2^40");
    require(pairBytes >= 1 && pairBytes <= (uint64_t{1} << 40), "--pair-bytes must be between 1 and 2^40");
    require(imbalance >= 1 && imbalance <= 1000, "--imbalance must be between 1 and 1000");
    require(hotRank >= 0 && hotRank < ranks, "--hot-rank must name a rank");
    require(alphaNs >= 0 && alphaNs <= kMaxDurationNs, "--alpha-ns must be between 0 and 2^40");
    require(bandwidthGBps >= 0.001 && std::isfinite(bandwidthGBps), "--bandwidth-gbps must be at least 0.001");
    require(stepGapNs >= 0 && stepGapNs <= kMaxDurationNs, "--step-gap-ns must be between 0 and 2^40");
    require(!host.empty(), "--host must not be empty");
    require(basePid > 0 && basePid + ranks < (1 << 24), "--pid must be positive and below 2^24");
    // The longest exchange: the hot rank takes (ranks - 1) x the hot bytes.
    const double longest = static_cast<double>(alphaNs) +
                           static_cast<double>(ranks - 1) * imbalance * static_cast<double>(pairBytes) / bandwidthGBps;
    require(longest <= static_cast<double>(kMaxDurationNs),
            "an exchange would take longer than 2^40 ns; "
            "lower --pair-bytes or --imbalance, or raise --bandwidth-gbps");
}

uint64_t AllToAllSpec::hotBytes() const {
    return static_cast<uint64_t>(std::llround(imbalance * static_cast<double>(pairBytes)));
}

TimeNs AllToAllSpec::exchangeNs(uint64_t bytes) const {
    return alphaNs + static_cast<TimeNs>(std::llround(static_cast<double>(bytes) / bandwidthGBps));
}

}  // namespace osc::synth

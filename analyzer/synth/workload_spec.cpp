#include "analyzer/synth/workload_spec.h"

#include "analyzer/synth/workload_synth.h"

#include <cmath>
#include <stdexcept>

namespace osc::synth {

std::string toString(OverlapMode mode) {
    switch (mode) {
        case OverlapMode::Sequential:
            return "sequential";
        case OverlapMode::PerParam:
            return "per-param";
        case OverlapMode::Bucketed:
            return "bucketed";
    }
    return "bucketed";
}

OverlapMode parseOverlapMode(const std::string& name) {
    if (name == "sequential") return OverlapMode::Sequential;
    if (name == "per-param") return OverlapMode::PerParam;
    if (name == "bucketed") return OverlapMode::Bucketed;
    throw std::invalid_argument("unknown overlap mode '" + name + "' (expected sequential, per-param or bucketed)");
}

void WorkloadSpec::validate() const {
    auto require = [](bool ok, const char* what) {
        if (!ok) throw std::invalid_argument(std::string("synth: ") + what);
    };
    require(layers >= 1, "--layers must be at least 1");
    require(forwardNs >= 0 && backwardNs >= 1, "--forward-ns must be >= 0 and --backward-ns >= 1");
    require(gradBytesPerLayer >= 1, "--grad-bytes must be at least 1");
    require(gradBytesList.empty() || gradBytesList.size() == static_cast<size_t>(layers),
            "--grad-bytes-list needs one value per layer (--layers)");
    require(backwardNsList.empty() || backwardNsList.size() == static_cast<size_t>(layers),
            "--backward-ns-list needs one value per layer (--layers)");
    for (TimeNs t : backwardNsList)
        require(t >= 1 && t <= (TimeNs{1} << 40), "--backward-ns-list values must be in [1, 2^40]");
    for (uint64_t b : gradBytesList)
        require(b >= 1 && b <= (uint64_t{1} << 40), "--grad-bytes-list values must be in [1, 2^40]");
    require(bucketMb > 0, "--bucket-mb must be positive");
    require(alphaNs >= 0, "--alpha-ns must be >= 0");
    require(bandwidthGBps > 0 && std::isfinite(bandwidthGBps), "--bandwidth-gbps must be positive");
    require(algoFactor > 0 && std::isfinite(algoFactor), "--algo-factor must be positive");
    require(ranks >= 1 && ranks <= 4096, "--ranks must be between 1 and 4096");
    require(steps >= 1, "--steps must be at least 1");
    require(jitter >= 0 && jitter < 1, "--jitter must be in [0, 1)");
    require(optimizerNs >= 0 && stepGapNs >= 0, "--optimizer-ns and --step-gap-ns must be >= 0");
    require(!host.empty(), "--host must not be empty");
    require(ranksPerHost >= 0, "--ranks-per-host must be >= 0");
    require(interference > 0 && interference <= 100, "--interference must be in (0, 100]");
    require(arrivalSkewNs.size() <= static_cast<size_t>(ranks) && clockOffsetNs.size() <= static_cast<size_t>(ranks),
            "--arrival-skew-ns and --clock-offset-ns take at most one value per rank");
    for (TimeNs v : arrivalSkewNs)
        require(v >= 0 && v <= (TimeNs{1} << 50), "--arrival-skew-ns values must be in [0, 2^50]");
    for (TimeNs v : clockOffsetNs)
        require(v >= -(TimeNs{1} << 50) && v <= (TimeNs{1} << 50), "--clock-offset-ns values must be within +-2^50");
    require(basePid > 0 && basePid + ranks < (1 << 24), "--pid must be positive and below 2^24");
    require(hostStallRank >= -1 && hostStallRank < ranks && slowComputeRank >= -1 && slowComputeRank < ranks,
            "--host-stall-rank and --slow-compute-rank must name a rank");
    require(hostStallNs >= 0 && hostStallNs <= (TimeNs{1} << 50), "--host-stall-ns must be in [0, 2^50]");
    require(hostStallStep >= -1, "--host-stall-step must be a step, or -1 for every step");
    require(!hostStallName.empty(), "--host-stall-name must not be empty");
    require(slowComputeFactor > 0 && slowComputeFactor <= 100, "--slow-compute-factor must be in (0, 100]");
    require((stallRank < 0) == (stallAtStep < 0), "--stall-rank and --stall-at-step go together");
    require((desyncRank < 0) == (desyncAtStep < 0), "--desync-rank and --desync-at-step go together");
    if (stallRank >= 0 || desyncRank >= 0) require(ranks >= 2, "a stall or a desync needs --ranks 2 or more");
    if (stallRank >= 0)
        require(stallRank < ranks && stallAtStep < steps, "--stall-rank must be a rank and --stall-at-step a step");
    if (desyncRank >= 0)
        require(desyncRank < ranks && desyncAtStep < steps, "--desync-rank must be a rank and --desync-at-step a step");
    if (stallRank >= 0 && desyncRank >= 0)
        require(desyncAtStep < stallAtStep, "--desync-at-step must come before --stall-at-step");
    require(stallTailNs >= 0 && stallTailNs <= (TimeNs{1} << 50), "the stall's tail must be in [0, 2^50] ns");
}

int WorkloadSpec::collectivesPerStep() const {
    return mode == OverlapMode::PerParam ? layers : static_cast<int>(planBuckets(*this).size());
}

TimeNs WorkloadSpec::commNs(uint64_t bytes) const {
    return alphaNs + static_cast<TimeNs>(std::llround(algoFactor * static_cast<double>(bytes) / bandwidthGBps));
}

void GenericSpec::validate() const {
    if (kernels < 1) throw std::invalid_argument("synth: --kernels must be at least 1");
    if (streams < 1 || streams > 1024) throw std::invalid_argument("synth: --streams must be between 1 and 1024");
    if (pid <= 0 || pid >= (1 << 24)) throw std::invalid_argument("synth: --pid must be positive and below 2^24");
}

}  // namespace osc::synth

// What `overlapscope synth` generates: a data-parallel training job described
// by a few numbers (README.md in this folder works out the answers the
// analyzer must find for each overlap mode), or a plain stream of kernels for
// benchmarks.
#pragma once

#include "analyzer/capture/model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace osc::synth {

// How gradients are communicated during the backward pass.
enum class OverlapMode {
    Sequential,  // all buckets reduced after the whole backward pass: nothing hidden
    PerParam,    // one all-reduce per layer, issued as soon as its gradient is ready
    Bucketed,    // DDP: layers grouped into buckets of ~bucketMb, issued when a bucket fills
};

std::string toString(OverlapMode mode);
// Throws std::invalid_argument for an unknown name.
OverlapMode parseOverlapMode(const std::string& name);

struct WorkloadSpec {
    int layers = 12;
    TimeNs forwardNs = 500'000;     // per layer
    TimeNs backwardNs = 1'000'000;  // per layer
    uint64_t gradBytesPerLayer = 8ull << 20;
    // Uneven layers: gradient bytes of layer 0, 1, ... (forward order), one
    // per layer; when set it replaces gradBytesPerLayer.
    std::vector<uint64_t> gradBytesList;
    // Uneven layers: backward compute ns of layer 0, 1, ...; replaces backwardNs.
    std::vector<TimeNs> backwardNsList;
    double bucketMb = 25.0;  // MiB; a bucket closes once it holds at least this much
    // Alpha-beta link: comm time = alpha + algoFactor * bytes / bandwidth.
    TimeNs alphaNs = 20'000;
    double bandwidthGBps = 25.0;  // 1 GB/s moves 1 byte per ns
    double algoFactor = 1.0;      // 2(n-1)/n models a ring all-reduce's traffic
    int ranks = 1;
    int steps = 5;
    double jitter = 0.0;  // each duration scaled by 1 + U(-jitter, +jitter)
    uint64_t seed = 1;
    OverlapMode mode = OverlapMode::Bucketed;
    bool commOnComputeStream = false;  // the classic bug: collectives serialize with compute
    TimeNs optimizerNs = 0;            // one optimizer kernel after all gradients are reduced (0 = none)
    TimeNs stepGapNs = 100'000;        // idle GPU time between steps
    std::string host = "synth-host";
    // 0: every rank on `host`. Else rank r runs on host "<host>-<r / ranksPerHost>"
    // as local rank r % ranksPerHost, so a job spans nodes as a real one does.
    int ranksPerHost = 0;
    int64_t basePid = 4000;  // rank r gets pid basePid + r
    // Compute kernels that start while their rank's communication runs take
    // this many times longer (docs/design.md 4b interference with a known answer).
    double interference = 1.0;
    // Per rank (missing ranks: 0). Rank r starts every step this much later,
    // so it arrives last at collectives by that much (docs/design.md 4c).
    std::vector<TimeNs> arrivalSkewNs;
    // Per rank: every time rank r records is off by this much, as a host
    // clock that disagrees with the others (--align collectives undoes it).
    std::vector<TimeNs> clockOffsetNs;
    // Why a rank is late, with known answers (docs/design.md 4d): rank
    // hostStallRank's host spends hostStallNs in a range named hostStallName
    // before the step's first launch, so its GPU idles that much longer
    // before the step (in step hostStallStep only; -1 every step); rank
    // slowComputeRank's compute kernels take slowComputeFactor times longer.
    int hostStallRank = -1;
    TimeNs hostStallNs = 0;
    int hostStallStep = -1;
    std::string hostStallName = "DataLoader.__next__";
    int slowComputeRank = -1;
    double slowComputeFactor = 1.0;
    // Hangs and desyncs with known answers (docs/design.md 4d). From step
    // stallAtStep on, rank stallRank enters no collective: its host stops
    // where it would call that step's first collective, and the other ranks
    // wait in that collective until the capture stops, stallTailNs after the
    // last of them arrived (their kernel never ends, so it has no record;
    // their plugin row has no GPU end, as the agent writes a collective still
    // running when a capture stops). -1: no stall.
    int stallRank = -1, stallAtStep = -1;
    TimeNs stallTailNs = 5'000'000'000;
    // Rank desyncRank calls step desyncAtStep's first collective with twice
    // the bytes of the others (its plugin row says so); it still completes.
    int desyncRank = -1, desyncAtStep = -1;

    TimeNs layerBackwardNs(int layer) const {
        return backwardNsList.empty() ? backwardNs : backwardNsList[static_cast<size_t>(layer)];
    }
    uint64_t layerBytes(int layer) const {
        return gradBytesList.empty() ? gradBytesPerLayer : gradBytesList[static_cast<size_t>(layer)];
    }
    TimeNs arrivalSkew(int rank) const {
        return rank < static_cast<int>(arrivalSkewNs.size()) ? arrivalSkewNs[static_cast<size_t>(rank)] : 0;
    }
    TimeNs clockOffset(int rank) const {
        return rank < static_cast<int>(clockOffsetNs.size()) ? clockOffsetNs[static_cast<size_t>(rank)] : 0;
    }
    TimeNs hostStall(int rank, int step) const {
        return rank == hostStallRank && (hostStallStep < 0 || hostStallStep == step) ? hostStallNs : 0;
    }

    // Throws std::invalid_argument naming the first bad field.
    void validate() const;
    // Collectives every rank calls per step (buckets, or layers per-param):
    // step s's first collective has seqNumber s * collectivesPerStep().
    int collectivesPerStep() const;
    // Communication time of one collective moving `bytes` (before jitter).
    TimeNs commNs(uint64_t bytes) const;
};

// `--kernels N --streams S`: N kernels over S streams for benchmarks. The last
// stream carries NCCL kernels (when S > 1), the others compute kernels.
struct GenericSpec {
    uint64_t kernels = 1000;
    int streams = 4;
    uint64_t seed = 1;
    std::string host = "synth-host";
    int64_t pid = 4000;

    void validate() const;
};

// Fixed anchors so generated files are reproducible byte for byte.
inline constexpr int64_t kSessionStartUtcNs = 1'767'225'600'000'000'000;  // 2026-01-01
inline constexpr TimeNs kFirstKernelNs = 1'000'000;
inline constexpr uint32_t kComputeStream = 7;
inline constexpr uint32_t kCommStream = 13;
inline constexpr uint64_t kCommHash = 0x5e1f0c0ffee15eedull;

}  // namespace osc::synth

// `overlapscope whatif`: step time and exposed communication predicted for
// other DDP bucket sizes from one capture (docs/metrics.md "What-if").
//
// Per device and step: fit the gradient collectives' cost (alpha + ns per
// byte), find when each bucket's gradients were ready (host launch order),
// close new buckets on those gradient-ready points the way DDP does, run
// them one after another on the communication stream, and measure the step.
// Replaying the observed buckets checks the model against the capture.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/whatif/cost_fit.h"
#include "analyzer/whatif/readiness.h"
#include "analyzer/whatif/replay.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::whatif {

struct WhatIfSettings {
    std::vector<double> bucketMb{1, 5, 10, 25, 50, 100};  // MiB
    BucketRule rule = BucketRule::AtLeast;
    ReadinessMode readiness = ReadinessMode::Kernels;
    bool latencies = true;             // fit the ready lag and queue gap (the refinement)
    bool jointRanks = true;            // several ranks: a collective moves once the last rank arrives
    std::optional<double> observedMb;  // the bucket size the job ran with, when the user says
    std::optional<double> alphaNs;     // fixes alpha instead of fitting it
    std::optional<double> gradMb;      // gradient MiB per step, when the capture has no sizes
    double defaultAlphaNs = kDefaultAlphaNs;
    std::string backwardPattern = "backward";  // case-insensitive regex for backward-pass ranges
    std::string forwardPattern = "forward";    // case-insensitive regex for forward-pass ranges

    // Throws std::invalid_argument naming the bad setting.
    void validate() const;
};

struct ScenarioResult {
    double bucket_mb = 0;
    int buckets = 0;
    TimeNs step_ns = 0;
    TimeNs exposed_comm_ns = 0;
    std::optional<double> overlap_ratio;
    TimeNs no_overlap_step_ns = 0;       // bound: every collective after the compute
    TimeNs perfect_overlap_step_ns = 0;  // bound: all bytes back to back from the first gradient
    bool best = false;
};

struct ObservedResult {
    double bucket_mb = 0;  // --observed-mb, else the largest bucket but the last
    int buckets = 0;
    TimeNs step_ns = 0;
    TimeNs exposed_comm_ns = 0;
    TimeNs replayed_step_ns = 0;  // the observed buckets replayed through the model
    TimeNs replayed_exposed_comm_ns = 0;
};

struct DeviceWhatIf {
    int rank = -1;
    uint32_t device = 0;
    std::string label;  // "rank 0 (host:pid)" and the device
    bool modelled = false;
    std::string reason;  // why not, when not modelled
    std::string collective;
    uint32_t stream = 0;
    CostModel fit;
    Latencies latencies;
    ObservedResult observed;
    std::optional<double> self_check_error;  // (replayed - measured) / measured step
    std::vector<ScenarioResult> scenarios;
    int steps_total = 0, steps_modelled = 0;
    // Of the modelled gradient collectives, how many ran inside a forward-pass range.
    int gradients = 0, gradients_in_forward = 0;
    std::vector<std::string> notes;  // what the model had to assume
};

struct WhatIfResult {
    WhatIfSettings settings;
    std::vector<DeviceWhatIf> devices;
    // Median over modelled devices (--summary).
    std::vector<ScenarioResult> summary;
    std::optional<ObservedResult> summaryObserved;
    std::optional<double> summarySelfCheck;
    std::vector<std::string> warnings;
};

// Self-check errors above this are warned about.
inline constexpr double kSelfCheckWarn = 0.05;
// Above this the model does not fit the capture: `overlapscope whatif`
// refuses it (exit 2) without --force, and the GUI panel names no best size.
inline constexpr double kSelfCheckRefuse = 0.10;

// Why the bucket-size model does not fit this capture, in one line, or
// nullopt when it does. It does not fit when the collectives it would
// re-bucket are not the gradient buckets of a backward pass (most of them
// ran inside forward-pass ranges: tensor parallelism's all-gathers and
// reduce-scatters), or when replaying the observed buckets misses the
// measured step by more than kSelfCheckRefuse. Devices not modelled at all
// are said so by their own `reason`, not here.
std::optional<std::string> modelMisfit(const WhatIfResult& result);

// Throws std::invalid_argument for invalid settings (a bad regex).
WhatIfResult runWhatIf(const Capture& capture, const Analysis& analysis, const WhatIfSettings& settings);

}  // namespace osc::whatif

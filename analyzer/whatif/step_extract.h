// From a capture and its analysis to the what-if model's steps: the gradient
// collectives of each step, their sizes and readiness, and the work around them.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/classify.h"
#include "analyzer/whatif/cost_fit.h"
#include "analyzer/whatif/readiness.h"
#include "analyzer/whatif/step_model.h"

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace osc::whatif {

struct ExtractSettings {
    ReadinessMode readiness = ReadinessMode::Kernels;
    // Host (or GPU-side) ranges whose name matches this mark the backward pass.
    std::regex backward{"backward", std::regex::ECMAScript | std::regex::icase};
    // Ranges whose name matches this mark the forward pass: a gradient
    // collective launched inside one is not a gradient bucket (tensor
    // parallelism's all-gathers and reduce-scatters run there).
    std::regex forward{"forward", std::regex::ECMAScript | std::regex::icase};
    // Gradient bytes per step, for captures that record no collective sizes
    // (an Nsight Systems export of an NCCL job): shared out by duration.
    std::optional<double> gradBytes;
    double defaultAlphaNs = kDefaultAlphaNs;
};

struct DeviceSteps {
    std::string collective;            // "AllReduce", "ReduceScatter" or "copies" (--comm-copies)
    uint32_t stream = 0;               // the gradient collectives' stream
    std::vector<StepModel> steps;      // the modelled ones
    std::vector<CostSample> samples;   // (bytes, cost) of their buckets
    bool sizesInferred = false;        // some sizes came from gradBytes
    std::string reason;                // why nothing is modelled, when steps is empty
    std::vector<std::string> skipped;  // "step 3: why", for steps left out
    // Of the modelled steps' gradient collectives, how many ran inside a
    // forward-pass range (launched there, or on the GPU under a GPU-side one).
    int gradients = 0, gradientsInForward = 0;
};

// Gradient collectives are all-reduce or reduce-scatter kernels of known
// size (NCCL profiler plugin rows, Kineto collective args), or with
// --comm-copies the communication copies (consecutive copies launched with
// no compute kernel launched between them are one collective). The type with
// the most bytes on the device is modelled, on the stream that carries most
// of them; other communication keeps its time.
DeviceSteps extractDeviceSteps(const Capture& capture, const Analysis& analysis, size_t deviceIndex,
                               ActivityClassifier& classifier, const ExtractSettings& settings);

}  // namespace osc::whatif

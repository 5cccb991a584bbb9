// Per-device busy time by category, indexed for O(log n) window queries.
// The analyzer computes every window's metrics from it; the GUI builds one
// per device for range selections and lane shading.
#pragma once

#include "analyzer/metrics/classify.h"
#include "analyzer/metrics/intervals.h"

namespace osc {

struct DeviceCoverage {
    CoverageIndex compute;        // C: compute kernels, all streams merged
    CoverageIndex comm;           // M: communication kernels and copies
    CoverageIndex memory;         // X: other copies and memsets
    CoverageIndex overlap;        // C ∩ M
    CoverageIndex exposedComm;    // M ∖ C
    CoverageIndex computeOrComm;  // C ∪ M
    CoverageIndex busy;           // C ∪ M ∪ X
    // First start to last end of non-empty GPU activity; empty when none.
    Interval span;

    // The section 4 metrics over window w (clipped to nothing outside w).
    OverlapMetrics metrics(Interval w) const;
};

// The kernel's name id for classification: demangled, else the short name.
inline uint32_t kernelNameId(const KernelTable& k, size_t i) {
    return k.name[i] != kNoId ? k.name[i] : (i < k.shortName.size() ? k.shortName[i] : kNoId);
}

// One pass over the device's tables (start-sorted after Capture::finalize;
// unsorted input also works, it is just slower).
DeviceCoverage buildDeviceCoverage(const Device& device, ActivityClassifier& classifier);

// Convenience for the GUI: classifies with `settings` against capture.strings.
DeviceCoverage buildDeviceCoverage(const Capture& capture, const Device& device, const AnalysisSettings& settings = {});

}  // namespace osc

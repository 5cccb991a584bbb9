// Finding training steps and projecting them onto GPU time.
//
// A step is an NVTX / annotation range whose name matches the step pattern.
// CPU-side ranges are projected through correlation ids: the GPU work a step
// launched is every kernel, copy and memset whose launching API call
// (same correlation id) started inside the range, on any thread of the process
// (PyTorch launches the backward pass from the autograd thread, not the thread
// that opened ProfilerStep#N). Where step ranges of several threads overlap
// in time, an API call goes to the range on its own thread when one contains
// it, else to the earliest-starting one. GPU-side ranges (Kineto
// gpu_user_annotation) are already on GPU time; they are used only for a
// process that has no CPU-side step range, merged by name where they overlap
// (Kineto writes one per stream).
#pragma once

#include "analyzer/metrics/coverage.h"

#include <regex>
#include <string>
#include <vector>

namespace osc {

// Correlation id -> value, flat when the ids are dense, sorted pairs otherwise.
// The flat table starts at the lowest id: a late window of a long job (the
// live agent's step, a capture attached after hours) has ids in the
// millions, few of them, and must not pay for a table from 0.
// Ids 0 and kNoId mean "unknown" (readers fill them when a source has none)
// and are never entered, so unknown launches do not all land in one step.
class CorrelationMap {
public:
    // From parallel columns; only rows with value >= 0 are entered.
    void build(const std::vector<uint32_t>& ids, const std::vector<int32_t>& values);
    int32_t find(uint32_t id) const {
        if (!flat_.empty() || sorted_.empty()) return id - base_ < flat_.size() ? flat_[id - base_] : -1;
        return findSorted(id);
    }

private:
    int32_t findSorted(uint32_t id) const;
    uint32_t base_ = 0;  // the id of flat_[0] (unsigned: an id below it wraps past the end)
    std::vector<int32_t> flat_;
    std::vector<std::pair<uint32_t, int32_t>> sorted_;
};

class StepProjector {
public:
    // `matches` caches pattern results per string id across processes.
    StepProjector(const Capture& capture, const Process& process, const std::regex& pattern,
                  std::vector<int8_t>& matches);

    size_t size() const { return ranges_.size(); }
    const std::string& name(size_t step) const { return names_[step]; }
    // The range itself: CPU time, or GPU time when onGpu().
    Interval range(size_t step) const { return ranges_[step]; }
    bool onGpu() const { return onGpu_; }
    // The step (index < size()) whose range launched this correlation id, or -1.
    int32_t stepOfCorrelation(uint32_t correlation) const { return byCorrelation_.find(correlation); }
    // GPU window of every step on this device; empty where it has no GPU work.
    std::vector<Interval> gpuWindows(const Device& device, const DeviceCoverage& coverage) const;

private:
    std::vector<Interval> ranges_;  // CPU or GPU time, see onGpu_; start-sorted
    std::vector<std::string> names_;
    bool onGpu_ = false;
    CorrelationMap byCorrelation_;
};

}  // namespace osc

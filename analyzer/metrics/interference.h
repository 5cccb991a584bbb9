// docs/design.md section 4b: how much longer compute kernels run while
// communication runs beside them, against the same kernel signature running
// alone.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/coverage.h"

#include <cstdint>
#include <vector>

namespace osc {

// The overlapped compute kernels of one device, start-sorted, each with its
// signature's baseline when it has one; window sums are then a scan.
class InterferenceIndex {
public:
    InterferenceIndex(const Capture& capture, const Device& device, ActivityClassifier& classifier,
                      const DeviceCoverage& coverage);

    // The 4b sums over the overlapped kernels starting in `window`;
    // `overlap_ns` is the window's |C ∩ M| for net_overlap_gain_ns.
    InterferenceMetrics over(Interval window, TimeNs overlap_ns) const;
    // Per signature with at least one overlapped kernel, largest summed
    // slowdown first (signatures without a baseline last).
    const std::vector<SignatureInterference>& signatures() const { return signatures_; }

private:
    static constexpr uint32_t kNotOverlapped = UINT32_MAX;
    static constexpr uint32_t kIsolated = 1u << 31;  // while building: the slot of an isolated kernel
    // 4 bytes per kernel rather than a copy of each overlapped one: on 10M
    // kernels that kept the report's peak memory down by about 200 MB.
    const KernelTable& kernels_;
    bool sorted_ = true;            // kernels by start: windows are a binary search away
    std::vector<uint32_t> slotOf_;  // per kernel: its signature slot when overlapped
    std::vector<TimeNs> baseline_;  // per slot; -1 when the signature has none
    std::vector<SignatureInterference> signatures_;
};

}  // namespace osc

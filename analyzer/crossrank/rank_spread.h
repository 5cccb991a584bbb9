// The spread across ranks of step time and overlap (docs/design.md section 4
// "Multi-rank"): min, median and max over devices.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>
#include <string_view>
#include <vector>

namespace osc::crossrank {

// One device's steps as the spread reads them; names are views into the
// caller's steps.
struct SpreadStep {
    std::string_view name;
    TimeNs window_ns = 0, overlap_ns = 0, comm_ns = 0;
};
struct SpreadDevice {
    std::vector<SpreadStep> steps;
    TimeNs overlap_ns = 0, comm_ns = 0;  // the whole capture's, for devices without common steps
};

// Min / median / max over devices of mean step time and step overlap ratio,
// over the step names every device has (a device with none of them counts
// with its whole capture's overlap); nullopt with fewer than two devices.
std::optional<RankSpread> rankSpread(const std::vector<SpreadDevice>& devices);

}  // namespace osc::crossrank

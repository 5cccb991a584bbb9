// Which steps of different devices are the same step: the same name, and the
// same occurrence of that name on each device (a custom --step-pattern may
// give every step one name). Used where one step spans several devices: the
// pipeline bubble and all-to-all per step.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace osc {

using StepKey = std::pair<std::string, int>;  // (name, occurrence); ("", -1) = outside any step
inline const StepKey kOutsideSteps{"", -1};

inline std::vector<StepKey> stepKeys(const DeviceAnalysis& device) {
    std::vector<StepKey> keys;
    keys.reserve(device.steps.size());
    std::map<std::string, int> seen;
    for (const auto& s : device.steps) keys.emplace_back(s.name, seen[s.name]++);
    return keys;
}

}  // namespace osc

// One closed step's numbers per device, from the analyzer itself: the step's
// one-process capture (step_assembler.h) goes through analyze() (the
// per-device half of analyzer/metrics, then analyzer/crossrank over the
// process's devices), so the live figures are the report's figures for the
// same step, not a second implementation of them.
#pragma once

#include "agent/live/step_assembler.h"
#include "analyzer/metrics/analysis.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::agent::live {

struct DeviceStepMetrics {
    uint32_t device = 0;
    std::string step;                       // the step's name
    int64_t number = -1;                    // its number, -1 when the name has none
    bool complete = true;                   // every launch had its GPU record
    OverlapMetrics metrics;                 // over the step's GPU window on this device
    TimeNs windowStart = 0, windowEnd = 0;  // that window, on the stream's timeline
    // The GPU's idle time between the previous step's window on this device
    // and this one's (set by the live pipeline; absent for the first step
    // it measures, and 0 where the windows overlap).
    std::optional<TimeNs> idleBefore;
    // Waiting for the slowest device of this process (docs/design.md 4c;
    // absent with one device: other processes' ranks are not known here).
    std::optional<WaitTransferMetrics> wait;
    // Communication with sizes known from the NCCL plugin: bytes, those
    // bytes times the nccl-tests factor, and the time they took to move
    // (each operation's duration less its wait for the last rank when the
    // process knows it).
    uint64_t bytes = 0;
    double busBytes = 0;
    TimeNs transferNs = 0;
    int operations = 0;  // communication operations launched in the step
};

// Throws std::invalid_argument for an invalid pattern in `settings`.
std::vector<DeviceStepMetrics> measureStep(const ClosedStep& step, const AnalysisSettings& settings);

}  // namespace osc::agent::live

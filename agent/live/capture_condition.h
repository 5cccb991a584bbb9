// `--capture-when`: the condition (control/capture_condition.h) evaluated
// on the live step metrics. Once it has held for its number of consecutive
// steps (on any GPU of the process) it starts a capture of the next steps;
// at most once per cooldown.
#pragma once

#include "agent/live/step_metrics.h"
#include "control/capture_condition.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace osc::agent::live {

using control::CaptureCondition;
using control::parseCaptureCondition;

// The metric's value for one device's step; nullopt where it is undefined
// (a ratio without communication, waiting with one GPU), which never holds.
std::optional<double> conditionMetric(std::string_view metric, const DeviceStepMetrics& step);

class ConditionWatch {
public:
    ConditionWatch(CaptureCondition condition, int64_t cooldownNs)
        : condition_(std::move(condition)), cooldownNs_(cooldownNs) {}

    // One closed step (its devices). True when a capture should start now:
    // the condition held for its steps in a row, no capture is `busy`, and
    // the last one this watch started is a cooldown ago. The count starts
    // again after a start, and whenever the condition fails.
    bool observe(const std::vector<DeviceStepMetrics>& step, int64_t steadyNs, bool busy);
    // A capture of the same steps began at `steadyNs` for another reason (a
    // trigger of another rank of the job): the cooldown starts from there.
    void started(int64_t steadyNs) {
        lastStartNs_ = steadyNs;
        run_ = 0;
    }
    int run() const { return run_; }
    const CaptureCondition& condition() const { return condition_; }

private:
    CaptureCondition condition_;
    int64_t cooldownNs_;
    int run_ = 0;
    std::optional<int64_t> lastStartNs_;
};

}  // namespace osc::agent::live

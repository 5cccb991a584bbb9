// `overlapscope attach --steps N [--at-step S]`: a capture of the same whole
// steps on every agent (agent/live/step_capture.h), and `--plan`, which only
// says from which step such a capture can start on this machine (to take the
// largest over a job's nodes before attaching them all at that step).
//
// `attach` of several agents without --steps does the same by default when
// the job has steps (attachAligned): each rank starting its capture when the
// request reaches it would put their first steps apart, and the cross-rank
// analysis of captures whose windows differ compares different moments.
#pragma once

#include "control/control_protocol.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace osc::cli {

struct StepAttachOptions {
    int64_t steps = 0;
    std::optional<int64_t> atStep;
    std::optional<std::string> outputDir;  // absolute
    bool partial = false;
    bool plan = false;     // print the first step that every agent here can capture whole, and attach nothing
    bool wait = false;     // return once every step capture has ended (and its partial is written)
    double leadS = 3;      // --plan and no --at-step: start this long after the newest step seen
    double timeoutS = 60;  // waiting for steps (and, with --wait, for the captures)
};

// "pid 12 rank 3"
std::string agentName(const control::AgentStatus& status);

// Exit code: 0 when every agent did as asked, 1 otherwise (each problem one line).
int attachSteps(const std::vector<std::string>& sockets, const StepAttachOptions& options);

// A wall-clock attach of several agents (`--duration D`, 0 = until detach):
// when every agent shows steps, a step capture from one step number on all of
// them, of the steps that take about D seconds (every step until detach for
// 0); when no step shows in a few seconds, or some agent shows none,
// `plainAttach` (a capture from now on each). `options` gives the output
// directory, --lead and --timeout.
int attachAligned(const std::vector<std::string>& sockets, double durationS, const StepAttachOptions& options,
                  const std::function<int()>& plainAttach);

}  // namespace osc::cli

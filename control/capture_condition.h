// `--capture-when 'exposed_comm_ratio>0.3 for 20 steps'`: the condition's
// syntax, checked by `overlapscope run` (one line, exit 2) and read by the
// agent, which evaluates it on each closed step (agent/live/capture_condition.h).
//
//   CONDITION := METRIC OP NUMBER [ "for" N ("step" | "steps") ]
//   METRIC    := exposed_comm_ratio | exposed_comm_seconds | overlap_ratio
//              | step_seconds | comm_seconds | compute_seconds | idle_ratio
//              | comm_wait_seconds
//   OP        := > | >= | < | <=
#pragma once

#include <string>
#include <string_view>

namespace osc::control {

struct CaptureCondition {
    std::string metric;
    enum class Op { Greater, GreaterEqual, Less, LessEqual } op = Op::Greater;
    double threshold = 0;
    int steps = 1;
};

// Throws std::invalid_argument with a one-line reason naming what is wrong.
CaptureCondition parseCaptureCondition(std::string_view text);

}  // namespace osc::control

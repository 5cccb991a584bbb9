// The stalled job the hang tests share (analyzer/synth/README.md, "Hangs and
// desyncs"): 4 ranks, 6 layers of 8 MiB in 25 MiB buckets (2 all-reduces a
// step), 4 steps; rank 2 enters no collective from step 2 on, so the others
// wait in AllReduce #4 and rank 2 last completed #3.
#pragma once

#include "analyzer/synth/workload_spec.h"

namespace osc::testsupport {

inline synth::WorkloadSpec stalledJob() {
    synth::WorkloadSpec s;
    s.ranks = 4;
    s.layers = 6;
    s.steps = 4;
    s.stallRank = 2;
    s.stallAtStep = 2;
    return s;
}

}  // namespace osc::testsupport

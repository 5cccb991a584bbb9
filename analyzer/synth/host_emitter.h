// The CPU side of a synthetic step, shared by the workload models: a
// `step N` NVTX range holding one launch call per kernel (joined to the
// kernel by correlation id, as in real captures), and optional ranges around
// consecutive launches (the pipeline model's `fwd mb 3` / `bwd mb 3`).
#pragma once

#include "analyzer/synth/process_sinks.h"

#include <cstdint>
#include <string>
#include <vector>

namespace osc::synth {

// The CPU issues a step's first launch this long before its first kernel
// runs, and spaces its launches at most this far apart.
inline constexpr TimeNs kLaunchLeadNs = 20'000;
inline constexpr TimeNs kMaxLaunchSpacingNs = 5'000;

// One kernel and what its launch carries.
struct SynthLaunch {
    KernelRow kernel;                 // times on the GPU; correlationId must be set
    bool nccl = false;                // launched by the driver (cuLaunchKernelEx), as NCCL does
    std::vector<CollectiveRow> rows;  // NCCL plugin rows (enqueue is filled in)
    int range = -1;                   // index into StepLaunches::ranges, -1 = none
};

struct StepLaunches {
    std::string name;                   // "step 3"
    std::vector<std::string> ranges;    // names of the inner ranges
    std::vector<SynthLaunch> launches;  // in program order; a range's launches are consecutive
};

// One launch call on thread `tid` over [callStart, callEnd) with this
// correlation id, and no kernel: work the GPU never finished (a hang).
void emitLaunchCall(RowSink& sink, uint64_t tid, TimeNs callStart, TimeNs callEnd, uint32_t correlationId, bool nccl,
                    TimeNs clockOffset);

// One launch call on thread `tid` over [callStart, callEnd) and the kernel it
// launched, joined by the kernel's correlation id; `clockOffset` moves both.
void emitLaunch(RowSink& sink, uint64_t tid, TimeNs callStart, TimeNs callEnd, KernelRow kernel, bool nccl,
                TimeNs clockOffset);

// Emits the step: its range starts a fixed lead before the step's first GPU
// work and the launch calls are spaced so that the range ends before the GPU
// work does (the next step's range then begins after it). `clockOffset` moves
// every time the rank records, as a host clock that disagrees.
void emitStep(RowSink& sink, const ProcessIdentity& who, StepLaunches& step, TimeNs clockOffset = 0);

}  // namespace osc::synth

// A training job paced by the wall clock, as the fake GPU plays it for the
// live metrics (OVERLAPSCOPE_FAKE_STEP_MS): step n runs from n * P on
// CLOCK_REALTIME, so every process of a job (every fake rank) is at the same
// step at the same moment and names it the same ("ProfilerStep#n"), as the
// ranks of a synchronous data-parallel job are. A process that falls more
// than a step behind (a loaded machine) goes on at the current slot but
// keeps counting its step numbers by one, as a training loop does, so every
// rank still names the same sequence of steps. Per step and device:
//
//   CPU  [t0, t0 + 0.95 P)             the "ProfilerStep#n" range, and a launch
//                                      record for every kernel inside it
//   GPU  [t0 + L + 0.05 P, + 0.6 P)    compute kernels back to back (stream 7)
//        [t0 + L + 0.45 P + skew, t0 + L + 0.85 P)  all-reduce kernels (stream 13)
//
// L is the GPU's lag behind the CPU, and `skew` (per device index) delays a
// device's first all-reduce: the other devices of the process wait for it.
// Only the schedule lives here; FakeActivitySource plays it.
#pragma once

#include <cstdint>
#include <vector>

namespace osc::agent {

struct PacedTrainingOptions {
    int64_t stepNs = 0;            // P; 0 = not paced
    int computeKernels = 6;        // per step and device
    int commKernels = 2;           // per step and device
    int devices = 1;               // CUDA devices the process drives
    int64_t gpuLagNs = -1;         // L; -1 = one step
    int64_t deviceSkewNs = 0;      // device d's all-reduces start d * this later
    uint64_t collectiveBytes = 0;  // > 0: the NCCL plugin reports each all-reduce with this many bytes
    int ranks = 2;                 // nranks the plugin rows name
    int rank = 0;                  // this process's rank (its devices are ranks rank * devices + d, mod ranks)
    // A hang: from the first step starting at or after `stallAtNs`
    // (CLOCK_REALTIME; 0 = never), rank `stallRank`'s host stops where it
    // would launch that step's first all-reduce (it enters no collective
    // again), and every other rank launches that step's all-reduces, which
    // never complete (they wait for it), and then launches nothing more.
    int stallRank = -1;
    int64_t stallAtNs = 0;
};

struct PacedKernel {
    uint32_t device = 0, stream = 0;
    bool comm = false;
    int commIndex = 0;                             // the k-th all-reduce of its device in the step
    int64_t launchNs = 0, startNs = 0, endNs = 0;  // CLOCK_REALTIME
};

struct PacedStep {
    uint64_t number = 0;
    int64_t rangeStartNs = 0, rangeEndNs = 0;
    std::vector<PacedKernel> kernels;  // in launch order
};

PacedStep pacedStep(const PacedTrainingOptions& options, uint64_t number);

}  // namespace osc::agent

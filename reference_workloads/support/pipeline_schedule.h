// Pipeline parallelism: S stages (one per rank), M micro-batches, the GPipe
// or 1F1B order of forward (F) and backward (B) passes on every stage, and the
// point-to-point transfers between stages, arranged into the actions one
// stage issues: compute passes and send/receive groups.
//
// Transfers: F(m) on stage s sends its output activation to stage s+1, whose
// F(m) needs it; B(m) on stage s+1 sends its input gradient to stage s, whose
// B(m) needs it. A one-stage pipeline has no neighbour, so it stands in for a
// middle stage by sending to itself (loopbacks, so that one GPU still shows
// the transfers): its input activation arrives (input), its output comes back
// as the incoming gradient (loss: for the mean squared loss the gradient of
// the output is the output), and its input gradient leaves (drain).
//
// Naive (blocking): every group runs on the compute stream between two
// passes: the sends of the pass just done fused with the receives of the next
// pass, as Megatron-LM's send_forward_recv_backward and friends do, so two
// neighbours that send to each other at the same time do not deadlock.
// Overlapped: the transfers go on a communication stream in one global order,
// by the time the receiving pass needs them in an ideal timeline (forward 1,
// backward 2, free transfers; the later micro-batch first on ties), grouped at
// most a send and a receive that are neighbours in that order; each group is
// issued as soon as the pass producing what it sends has been issued, and a
// pass waits only for the group holding its input. So receives are posted
// ahead of need (the next micro-batch's activation arrives while the current
// one computes) and sends never block the compute stream. A transfer's data
// needs only transfers earlier in the global order and every stage meets its
// transfers in that order, so no stage waits for a transfer its peer queued
// behind one that waits for it: deadlock-free, which simulate_pipeline checks
// in the unit tests for 1-6 stages and 1-10 micro-batches.
#pragma once

#include <string>
#include <vector>

namespace oscwl {

enum class PipeSchedule { gpipe, one_f_one_b };
const char* to_string(PipeSchedule s);

struct PipePass {
    bool backward = false;
    int mb = 0;
    bool operator==(const PipePass& o) const { return backward == o.backward && mb == o.mb; }
};

// The passes of `stage` in issue order. GPipe: F0..F(M-1), B0..B(M-1).
// 1F1B: min(S-1-stage, M) warm-up forwards, then alternately one forward and
// one backward, then the remaining backwards.
std::vector<PipePass> stage_passes(PipeSchedule schedule, int stages, int stage, int microbatches);

enum class PipeData { activation, gradient, input, loss, drain };
const char* to_string(PipeData d);

struct PipeP2P {
    enum class Role { send, recv, loopback };
    Role role;
    PipeData data;
    int mb;
    int peer;  // the other stage; the own stage for a loopback
};

struct PipeAction {
    bool is_pass = false;
    PipePass pass;               // when is_pass
    std::vector<PipeP2P> group;  // otherwise: one send/receive group
    // Earlier actions of the same stage this one waits for (overlapped mode:
    // a pass waits for the group holding its input, a group for the passes
    // producing what it sends).
    std::vector<int> waits;
};

struct StagePlan {
    std::vector<PipeAction> actions;
    int groups() const;     // send/receive groups (one NCCL kernel each)
    int transfers() const;  // send, receive and loopback operations
};

struct PipelinePlan {
    PipeSchedule schedule = PipeSchedule::one_f_one_b;
    int stages = 1, microbatches = 1;
    bool overlap = false;
    std::vector<StagePlan> stage;
};

PipelinePlan plan_pipeline(PipeSchedule schedule, int stages, int microbatches, bool overlap);

// (S-1)/(M+S-1): the share of a step each stage idles while the pipeline
// fills and drains, when every pass of a kind takes the same time and
// communication is free. GPipe and 1F1B have the same bubble; 1F1B keeps
// fewer micro-batches' activations alive.
double pipeline_bubble_fraction(int stages, int microbatches);

// A timeline model of the plan: each pass takes t_fwd or t_bwd, each transfer
// t_p2p once both its sides have started their groups (a group ends when all
// its transfers do), naive plans run every action on one stream per stage and
// overlapped plans passes and groups on two. Used by the tests to show the
// plans deadlock-free and to count bubbles.
struct PipelineTimeline {
    bool deadlock = false;
    double makespan = 0;
    std::vector<double> busy;                                        // per stage: time in passes
    std::vector<std::vector<std::pair<double, double>>> pass_times;  // per stage, per pass in issue order
};
PipelineTimeline simulate_pipeline(const PipelinePlan& plan, double t_fwd, double t_bwd, double t_p2p);

}  // namespace oscwl

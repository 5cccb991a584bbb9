// What the analyzer computes from a capture (docs/design.md section 4). Plain
// values: the report writers, `check`, `diff` and the GUI panels read these.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/compact_list.h"
#include "analyzer/metrics/intervals.h"
#include "analyzer/metrics/packed_optional.h"
#include "analyzer/metrics/shared_text.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace osc {

struct AnalysisSettings {
    // Extra communication kernel patterns (ECMAScript regex, searched in the
    // demangled name), in addition to the built-in `nccl` prefix rule.
    std::vector<std::string> commKernelPatterns;
    bool commCopies = false;  // host<->device copies count as communication
    // Step range names (NVTX / user annotations). Default matches
    // `ProfilerStep#N`, `step N`, `iteration N` (first letter either case);
    // the regex itself is matched case-sensitively.
    std::string stepPattern = R"(^(ProfilerStep#\d+|[Ss]tep[ _#]?\d+|[Ii]teration[ _#]?\d+)$)";
    // "Many small collectives" finding: collectives below this many bytes...
    uint64_t smallCollectiveBytes = 1 << 20;
    // ...or, when the size is unknown (no NCCL plugin rows), shorter than this.
    TimeNs smallCollectiveNs = 20'000;
    // ...when at least this many of them are in one step.
    int smallCollectiveCount = 32;
    // "Idle gap" finding: a gap with no GPU activity at least this long.
    TimeNs idleGapNs = 1'000'000;
    // --align collectives (docs/design.md 4c): shift each process so that the ends
    // of its matched collectives line up with the lowest rank's in the median.
    bool alignCollectives = false;
    // Pipeline parallelism (docs/metrics.md section 7e): micro-batch ranges.
    // Group 1 is the phase (text starting with f/F = forward, b/B = backward),
    // group 2 the micro-batch number; searched in the range name.
    std::string microbatchPattern =
        R"(^([Ff]wd|[Bb]wd|[Ff]orward|[Bb]ackward)[ _-]?(?:mb|MB|microbatch|micro[ _-]batch)[ _#-]?(\d+)$)";
    // Stages S of the theoretical bubble (S-1)/(M+S-1); 0 = the number of
    // devices that ran micro-batches in the step (one device per stage).
    int pipelineStages = 0;
    // "PipelineBubble" finding: a stage's bubble share exceeds the theory by more than this.
    double bubbleExcessShare = 0.05;
    // "AllToAllImbalance" finding: a step's all-to-all imbalance (max/mean) at least this.
    double alltoallImbalance = 1.25;
    // docs/design.md 4d: the peak bus bandwidth of every device's link,
    // instead of the one its GPU model implies (--peak-busbw-gbps; set it for
    // collectives that cross nodes, whose limit is the network). A cross-rank
    // choice, like alignCollectives: partials need not agree on it.
    std::optional<double> peakBusBwGbps;
    // "Straggler" finding: a rank that arrived last at a collective at least
    // this much after the median rank of the collective.
    TimeNs stragglerLateNs = 1'000'000;
};

// The metrics of docs/design.md section 4 over one window.
struct OverlapMetrics {
    TimeNs window_ns = 0, compute_ns = 0, comm_ns = 0, overlap_ns = 0, exposed_comm_ns = 0, busy_ns = 0, idle_ns = 0;
    std::optional<double> overlap_ratio;     // null when comm_ns == 0
    std::optional<double> achieved_speedup;  // null when |C ∪ M| == 0
    std::optional<double> ideal_speedup;     // null when max(compute, comm) == 0

    // Fills the three ratios from the ns fields and |C ∪ M|.
    void computeRatios(TimeNs computeOrComm_ns);
};

// docs/design.md section 4b over one window: what overlap cost compute. Sums run
// over the overlapped compute kernels (at least half under communication)
// whose start lies in the window.
struct InterferenceMetrics {
    TimeNs overlapped_compute_ns = 0;
    TimeNs interfered_compute_ns = 0;             // of those, kernels whose signature has a baseline
    TimeNs interference_ns = 0;                   // signed: sum of (duration - baseline)
    std::optional<double> interference_coverage;  // interfered / overlapped
    std::optional<double> compute_slowdown;       // interference / (interfered - interference)
    TimeNs net_overlap_gain_ns = 0;               // overlap_ns - interference_ns
};

// docs/design.md section 4c over one window; absent with one device.
struct WaitTransferMetrics {
    TimeNs comm_wait_ns = 0;         // waiting for the last rank, not also transfer
    TimeNs exposed_wait_ns = 0;      // of that, not under compute
    TimeNs exposed_transfer_ns = 0;  // exposed_comm_ns - exposed_wait_ns
    // SendRecv kernels in the window that carry no peer (no plugin rows, no
    // PyTorch arguments): who they waited for is unknown, so the three
    // figures above are too (the report says null, and why). -1: unknown
    // for a reason not recorded (a report read back from JSON).
    int kernels_without_peer = 0;
    bool known() const { return kernels_without_peer == 0; }
};

// docs/metrics.md section 7e: one device as one pipeline stage,
// over a step (or, in DeviceAnalysis, summed over its pipeline steps).
struct PipelineStageMetrics {
    int stage = -1;         // position by first compute in the pipeline window (steps only)
    int stages = 0;         // S (steps only)
    int microbatches = 0;   // M (steps only)
    bool slowest = false;   // the stage with the most compute in the step (steps only)
    TimeNs window_ns = 0;   // |P|: first to last micro-batch compute over all stages
    TimeNs compute_ns = 0;  // |C ∩ P|
    TimeNs bubble_ns = 0;   // |P| - |C ∩ P| = fill + drain + stall
    TimeNs fill_ns = 0, drain_ns = 0, stall_ns = 0;
    std::optional<double> bubble_share;              // bubble / window
    std::optional<double> theoretical_bubble_share;  // (S-1)/(M+S-1), window-weighted over steps
};

// docs/metrics.md section 7f: a device's all-to-all over a window.
struct AllToAllMetrics {
    int ops = 0;                                         // all-to-all operations launched in the window
    TimeNs alltoall_ns = 0;                              // |A ∩ W|
    TimeNs exposed_alltoall_ns = 0;                      // |(A ∖ C) ∩ W|
    TimeNs transfer_ns = 0;                              // sum over its ops of end - max(start, last arrival)
    std::optional<uint64_t> bytes_sent, bytes_received;  // to / from other ranks, when known
};

// docs/design.md 4d: a device's bus bandwidth over one collective type and
// size class (bus bytes in [size_class, 2 * size_class)).
struct BusBwClass {
    std::string collective;
    uint64_t size_class = 0;
    int count = 0;  // operations with an algorithm bandwidth
    std::optional<double> median_algbw_gbps, median_busbw_gbps, median_busbw_fraction;
};

// docs/design.md 4d over a device's operations: lower medians, the link's
// peak, and how much exposed communication ran on a busy or an idle link.
struct BusBandwidth {
    std::optional<double> peak_busbw_gbps;
    std::string link;  // "NVLink 4 (H100 SXM)", "--peak-busbw-gbps"; "" when unknown
    int measured = 0;  // operations with an algorithm bandwidth
    std::optional<double> median_algbw_gbps, median_busbw_gbps, median_busbw_fraction;
    // Exposed time of the operations at >= 80% of the peak, and below it.
    TimeNs bandwidth_limit_exposed_ns = 0, schedule_limit_exposed_ns = 0;
    std::vector<BusBwClass> classes;  // by collective, then size class
};

// A name and the time it explains (a kernel that ran longer, a host range
// the GPU waited through).
struct NamedTime {
    std::string name;
    TimeNs ns = 0;
};

// docs/design.md 4d: why a rank that arrived last at a collective was late,
// against the median rank of that collective. The parts are differences of
// the two ranks' lead-ups (from where their step's GPU work began to the
// arrival); null without a step on either side.
struct LateArrival {
    std::string collective;
    std::optional<uint64_t> commHash;
    uint64_t number = 0;       // the plugin's sequence number, else the collective's ordinal on the device
    int collectiveIndex = -1;  // into the device's collectives
    std::string step;          // the straggler's step, "" outside any
    int medianDevice = -1;     // job device index of the median rank
    std::string medianLabel;
    TimeNs late_ns = 0;   // its start - the median rank's start
    TimeNs delay_ns = 0;  // its start - the second-latest start: what the others waited for it alone
    std::optional<TimeNs> late_start_ns, compute_ns, host_idle_ns, other_ns;
    std::vector<NamedTime> kernels;  // compute kernels that took longer than on the median rank, largest first
    std::vector<NamedTime> host;     // host activity during the GPU's extra idle time, largest first
};

// Over the collectives a device arrived at strictly last (docs/design.md 4c
// last_arrivals, collective groups only): sums of the parts, and the worst.
struct StragglerMetrics {
    int late_arrivals = 0;
    TimeNs late_ns = 0;
    // Sums over the late arrivals whose parts are known.
    TimeNs late_start_ns = 0, compute_ns = 0, host_idle_ns = 0, other_ns = 0;
    LateArrival worst;  // the largest late_ns
};

// One compute kernel signature (name, grid, block) on one device (4b).
struct SignatureInterference {
    std::string name;
    std::array<uint32_t, 3> grid{}, block{};
    int isolated = 0, overlapped = 0;
    std::optional<TimeNs> baseline_ns;           // lower median of >= 3 isolated durations
    std::optional<TimeNs> median_overlapped_ns;  // lower median of the overlapped durations
    std::optional<TimeNs> slowdown_ns;           // sum of (duration - baseline) when a baseline exists
};

enum class Category : uint8_t { Compute = 0, Communication = 1, Memory = 2 };

// docs/design.md 4d: what an operation's algorithm bandwidth divides its
// bytes by: the transfer time after its group's last arrival, or (matched on
// no other rank) its whole duration.
enum class BusBwBasis : uint8_t { None = 0, Transfer = 1, Duration = 2 };

// One send or receive inside a communication kernel (NCCL plugin Send/Recv
// rows, PyTorch trace arguments): the peer is its rank in the communicator.
// `seq` is the plugin row's seqNumber, numbered per communicator, peer and
// direction (docs/capture-format.md); PyTorch traces number nothing.
struct P2pPart {
    bool send = true;
    int32_t peer = -1;
    uint64_t bytes = 0;
    std::optional<uint64_t> seq;
    friend bool operator==(const P2pPart&, const P2pPart&) = default;
};

// One communication operation on one device: a communication kernel, or a
// peer-to-peer (or, with --comm-copies, host<->device) copy.
struct CollectiveInstance {
    SharedText name;        // kernel name (demangled) or copy description
    SharedText collective;  // AllReduce, AllGather, ReduceScatter, SendRecv, ... or ""
    SharedText datatype;    // f32, bf16, ... or ""
    TimeNs start_ns = 0, end_ns = 0;
    TimeNs duration_ns = 0, overlapped_ns = 0, exposed_ns = 0;
    // From the NCCL profiler plugin row matched to this kernel, when present.
    SharedText algo, proto;
    // Sends and receives of a SendRecv (or all-to-all) kernel, in row order,
    // and this device's rank and the size of the communicator from the rows
    // (-1 when unknown).
    CompactList<P2pPart> p2p;
    size_t kernelIndex = static_cast<size_t>(-1);  // row in Device::kernels, or -1 for a copy
    uint32_t stream = 0;
    int32_t commRank = -1, commSize = -1;
    int step = -1;                                 // index into DeviceAnalysis::steps, -1 outside any step
    PackedOptional<uint64_t> bytes;                // from the NCCL plugin table or the copy
    PackedOptional<double> bandwidth_gbps;         // bytes / duration
    PackedOptional<uint64_t> commHash, seqNumber;  // from the plugin row
    // docs/design.md 4d, decided across ranks (null before, and without
    // bytes): bytes over the transfer time (or the duration, see the basis),
    // with nccl-tests' bus factor, and against the link's peak.
    PackedOptional<double> algbw_gbps, busbw_gbps, busbw_fraction;
    BusBwBasis busbw_basis = BusBwBasis::None;
    bool allToAll = false;  // an all-to-all (section 7f), set by analyze()

    // What tables name the operation by: its collective, else its kernel name.
    const SharedText& collectiveOrName() const { return collective.empty() ? name : collective; }
};

enum class FindingKind {
    CommOnComputeStream,   // NCCL kernels share a stream with compute
    CommAfterLastCompute,  // communication starts only after the last compute kernel
    ManySmallCollectives,
    IdleGap,
    CommunicationBound,  // comm_ns > compute_ns: overlap cannot hide it
    PipelineBubble,      // a stage idles more than the pipeline's fill and drain explain
    AllToAllImbalance,   // one rank moves or takes much more all-to-all than the mean
    BandwidthLimit,      // exposed collectives ran at >= 80% of the link's peak bus bandwidth
    ScheduleLimit,       // exposed collectives ran below that: the link sat idle, the schedule exposed them
    Straggler,           // this rank arrived last at a collective, and why
    SharedGpu,           // other ranks run on the same GPU: no link is measured
};

struct Finding {
    FindingKind kind;
    std::string message;    // one sentence a person can act on
    TimeNs exposed_ns = 0;  // exposed communication (or idle) this finding explains
    // A time the message names, on the capture's timeline as it was when the
    // message was written (idle-gap: where its largest gap starts); not in
    // the report JSON. The merge of partial results moves it to the job's.
    std::optional<TimeNs> at_ns;
};

struct Bottleneck {
    int collective = -1;  // index into DeviceAnalysis::collectives, -1 if none
    TimeNs exposed_ns = 0;
    std::optional<double> share;      // of the step's exposed_comm_ns
    bool communicationBound = false;  // verdict: comm_ns > compute_ns
    std::vector<Finding> findings;
};

struct StepAnalysis {
    std::string name;
    TimeNs start_ns = 0, end_ns = 0;  // GPU window of the step
    OverlapMetrics metrics;
    Bottleneck bottleneck;
    InterferenceMetrics interference;
    std::optional<WaitTransferMetrics> wait;       // two or more devices
    std::optional<PipelineStageMetrics> pipeline;  // a pipeline step (micro-batches on >= 2 stages)
    std::optional<AllToAllMetrics> alltoall;       // the device ran all-to-all in the step
};

struct DeviceAnalysis {
    int processIndex = 0;  // into Capture::processes
    int rank = -1;
    std::string host;
    int64_t pid = 0;
    uint32_t device = 0;
    OverlapMetrics totals;  // over the device's span
    std::vector<StepAnalysis> steps;
    std::vector<CollectiveInstance> collectives;    // start-sorted
    std::vector<Finding> findings;                  // over the whole span
    InterferenceMetrics interference;               // over the whole span
    std::vector<SignatureInterference> signatures;  // with overlapped kernels, largest slowdown first
    std::optional<WaitTransferMetrics> wait;        // two or more devices
    std::optional<int> last_arrivals;               // groups this device started strictly last
    std::optional<TimeNs> delay_caused_ns;          // sum of (last - second-latest start) there
    std::optional<TimeNs> clock_shift_ns;           // with --align collectives
    std::optional<PipelineStageMetrics> pipeline;   // summed over its pipeline steps
    std::optional<AllToAllMetrics> alltoall;        // over the whole capture
    // Where exposed waiting happened ((Wt ∖ Tr) ∖ C), for the GUI's overlap
    // lane; empty with one device.
    IntervalSet exposed_wait_intervals;
    // From the capture's metadata (the device's process): records the agent
    // lost (absent when the file does not say: nsys, Kineto), and how the
    // capture ended ("stopped", "process_exit", "signal"; absent when not
    // recorded: an overlapscope capture killed or ended by a full disk, or
    // a file from another tool).
    std::optional<uint64_t> droppedRecords;
    std::optional<std::string> endReason;
    // The GPU's model as the capture names it ("NVIDIA H100 80GB HBM3"); ""
    // when unknown. Its link gives the peak bus bandwidth (docs/design.md 4d).
    std::string gpu;
    // The GPU's UUID as the capture gives it ("GPU-5e1f..."; "" when unknown,
    // as in PyTorch traces). Ranks with the same one share a GPU.
    std::string gpuUuid;
    std::optional<BusBandwidth> busbw;          // decided across ranks (transfer times)
    std::optional<StragglerMetrics> straggler;  // when it arrived strictly last at a collective
};

// The same collective seen on every rank.
struct MatchedCollective {
    std::string collective;
    bool pointToPoint = false;  // an all-to-all made of grouped sends and receives
    std::optional<uint64_t> commHash, seqNumber;
    // (device index in Analysis::devices, collective index in that device)
    std::vector<std::pair<int, int>> instances;
    TimeNs skew_ns = 0;      // latest start - earliest start: waiting for the slowest rank
    TimeNs transfer_ns = 0;  // earliest end after the last arrival: time actually moving data
};

struct RankSpread {
    // Over devices, of the mean window of the steps all devices have; absent
    // when no step name is common to all of them (no steps at all, or
    // different ones): a step time of 0 would read as measured.
    std::optional<TimeNs> step_time_min_ns, step_time_median_ns, step_time_max_ns;
    std::optional<double> overlap_ratio_min, overlap_ratio_median, overlap_ratio_max;
};

// One send matched with its receive (docs/metrics.md section 7d): the k-th
// send from one rank to another on a communicator with the k-th receive there.
struct P2pTransfer {
    std::pair<int, int> sender{-1, -1}, receiver{-1, -1};  // (device, collective index)
    std::optional<uint64_t> commHash;
    uint64_t bytes = 0;
};

// The pipeline in one step, over its stages (section 7e).
struct PipelineStep {
    std::string step;  // step name; "" = the whole capture (no step ranges)
    int stages = 0, microbatches = 0;
    TimeNs start_ns = 0, end_ns = 0;  // the pipeline window P
    std::optional<double> theoretical_bubble_share;
    std::vector<int> devices;  // the stage devices, in stage order
    int slowest = -1;          // device index of the stage with the most compute
};

// All-to-all in one step, over ranks (section 7f).
struct AllToAllRank {
    int device = -1;
    TimeNs time_ns = 0;             // transfer time of its all-to-all in the step
    TimeNs exposed_ns = 0;          // exposed all-to-all time in its step window
    std::optional<uint64_t> bytes;  // sent + received (or the plugin's bytes), when known
};
struct AllToAllPair {
    int src = -1, dst = -1;  // device indices
    uint64_t bytes = 0;
};
struct AllToAllStep {
    std::string step;  // "" = outside any step
    // Which of the steps named `step` on each device (0 = the first; -1
    // outside any step): with a custom step pattern every step may share one
    // name, and (step, occurrence) is how a rank's own step row finds this.
    int occurrence = -1;
    int dispatches = 0;
    std::vector<AllToAllRank> ranks;                        // by device
    std::vector<AllToAllPair> pairs;                        // by (src, dst), where sends name their peer
    std::optional<double> bytes_imbalance, time_imbalance;  // max / mean over ranks
    int overloaded = -1;                                    // device index: most bytes when known, else most time
    TimeNs exposed_ns = 0;                                  // summed over ranks
};

struct Analysis {
    AnalysisSettings settings;
    std::vector<DeviceAnalysis> devices;
    OverlapMetrics summary;                  // ns summed over devices, ratios from the sums
    std::vector<MatchedCollective> matched;  // multi-rank only
    TimeNs total_skew_ns = 0;
    std::optional<RankSpread> spread;    // multi-rank only
    std::vector<P2pTransfer> p2p;        // matched sends and receives
    std::vector<PipelineStep> pipeline;  // steps with micro-batches on >= 2 stages
    std::vector<AllToAllStep> alltoall;  // steps with all-to-all
    // Summed over the processes whose files say (ours); absent when none
    // does (nsys, Kineto): 0 would claim nothing was lost.
    std::optional<uint64_t> droppedRecords;
    std::vector<std::string> warnings;
};

// What the cross-rank half (analyzer/crossrank) needs of each device besides
// its DeviceAnalysis, on the same timeline.
struct DeviceIntervals {
    IntervalSet exposed;  // M ∖ C over the whole capture
    IntervalSet compute;  // C, kept only for devices that ran micro-batches
    // Per device step (-1: outside any step) that ran micro-batch compute:
    // the distinct forward and backward micro-batch numbers and the span of
    // that compute.
    struct MicroBatches {
        int step = -1;
        int forward = 0, backward = 0;
        Interval compute;
    };
    std::vector<MicroBatches> microbatches;
    // docs/design.md 4d, why a rank was late: per communication operation
    // launched in a step, its lead-up [from, start) (from: where the step's
    // GPU work began after the idle stretch before it) split into compute
    // and GPU idle time, with what ran then: per kernel name its compute time
    // and per host range name the idle time it covered, each counted since
    // the step's previous operation (`increments` of them follow, in order).
    struct LeadUp {
        uint32_t op = 0;  // into DeviceAnalysis::collectives
        int32_t step = -1;
        TimeNs from_ns = 0, compute_ns = 0, idle_ns = 0;
        uint32_t increments = 0;
    };
    struct LeadUpIncrement {
        uint32_t name = 0;  // into leadUpNames
        uint8_t host = 0;   // 1: host activity over idle time; 0: a compute kernel
        TimeNs ns = 0;
    };
    std::vector<LeadUp> leadUps;
    std::vector<LeadUpIncrement> leadUpIncrements;
    std::vector<std::string> leadUpNames;
};

// How much of the analysis its caller reads. Full: everything (reports,
// check, the GUI). StepFigures: each step's overlap metrics, the
// communication operations and what waiting versus transfer needs, and no
// findings, bottlenecks, interference, micro-batches or lead-ups (the live
// agent, which measures every step as it closes and publishes only those).
enum class AnalysisDepth { Full, StepFigures };

// The per-device half of the analysis (everything a device can know alone):
// appends one DeviceAnalysis per device of `capture` to `out.devices`
// (processIndex into capture.processes) and what the cross-rank half
// (analyzer/crossrank: analyze(), finishAnalysis) needs of it to
// `intervalsOfDevice`. Processes can so be analysed apart (one file at a
// time, on several threads) and their captures freed before the cross-rank
// half. `warningProcess`, when given, gets the process index of each
// warning added. `spent`, when given, is `capture` itself, which the caller
// gives up: the API calls' threads and correlations are freed once a
// process's steps are projected (no later step reads them; a twelfth of a
// PyTorch trace's capture). Throws std::invalid_argument for an invalid
// regex in the settings.
void analyzeProcesses(const Capture& capture, const AnalysisSettings& settings, Analysis& out,
                      std::vector<DeviceIntervals>& intervalsOfDevice, std::vector<int>* warningProcess = nullptr,
                      AnalysisDepth depth = AnalysisDepth::Full, Capture* spent = nullptr);

}  // namespace osc

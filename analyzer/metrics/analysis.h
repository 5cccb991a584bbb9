// What the analyzer computes from a capture (DESIGN.md section 4). Plain
// values: the report writers, `check`, `diff` and the GUI panels read these.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/intervals.h"

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
    // --align collectives (DESIGN.md 4c): shift each process so that the ends
    // of its matched collectives line up with the lowest rank's in the median.
    bool alignCollectives = false;
};

// The metrics of DESIGN.md section 4 over one window.
struct OverlapMetrics {
    TimeNs window_ns = 0, compute_ns = 0, comm_ns = 0, overlap_ns = 0, exposed_comm_ns = 0,
           busy_ns = 0, idle_ns = 0;
    std::optional<double> overlap_ratio;     // null when comm_ns == 0
    std::optional<double> achieved_speedup;  // null when |C ∪ M| == 0
    std::optional<double> ideal_speedup;     // null when max(compute, comm) == 0

    // Fills the three ratios from the ns fields and |C ∪ M|.
    void computeRatios(TimeNs computeOrComm_ns);
};

// DESIGN.md section 4b over one window: what overlap cost compute. Sums run
// over the overlapped compute kernels (at least half under communication)
// whose start lies in the window.
struct InterferenceMetrics {
    TimeNs overlapped_compute_ns = 0;
    TimeNs interfered_compute_ns = 0;  // of those, kernels whose signature has a baseline
    TimeNs interference_ns = 0;        // signed: sum of (duration - baseline)
    std::optional<double> interference_coverage;  // interfered / overlapped
    std::optional<double> compute_slowdown;       // interference / (interfered - interference)
    TimeNs net_overlap_gain_ns = 0;               // overlap_ns - interference_ns
};

// DESIGN.md section 4c over one window; absent with one device.
struct WaitTransferMetrics {
    TimeNs comm_wait_ns = 0;         // waiting for the last rank, not also transfer
    TimeNs exposed_wait_ns = 0;      // of that, not under compute
    TimeNs exposed_transfer_ns = 0;  // exposed_comm_ns - exposed_wait_ns
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

// One communication operation on one device: a communication kernel, or a
// peer-to-peer (or, with --comm-copies, host<->device) copy.
struct CollectiveInstance {
    std::string name;            // kernel name (demangled) or copy description
    std::string collective;      // AllReduce, AllGather, ReduceScatter, SendRecv, ... or ""
    std::string datatype;        // f32, bf16, ... or ""
    TimeNs start_ns = 0, end_ns = 0;
    uint32_t stream = 0;
    TimeNs duration_ns = 0, overlapped_ns = 0, exposed_ns = 0;
    std::optional<uint64_t> bytes;        // from the NCCL plugin table or the copy
    std::optional<double> bandwidth_gbps; // bytes / duration
    // From the NCCL profiler plugin row matched to this kernel, when present.
    std::optional<uint64_t> commHash, seqNumber;
    std::string algo, proto;
    int step = -1;         // index into DeviceAnalysis::steps, -1 outside any step
    size_t kernelIndex = static_cast<size_t>(-1);  // row in Device::kernels, or -1 for a copy
};

enum class FindingKind {
    CommOnComputeStream,     // NCCL kernels share a stream with compute
    CommAfterLastCompute,    // communication starts only after the last compute kernel
    ManySmallCollectives,
    IdleGap,
    CommunicationBound,      // comm_ns > compute_ns: overlap cannot hide it
};

struct Finding {
    FindingKind kind;
    std::string message;  // one sentence a person can act on
    TimeNs exposed_ns = 0;  // exposed communication (or idle) this finding explains
};

struct Bottleneck {
    int collective = -1;       // index into DeviceAnalysis::collectives, -1 if none
    TimeNs exposed_ns = 0;
    std::optional<double> share;  // of the step's exposed_comm_ns
    bool communicationBound = false;  // verdict: comm_ns > compute_ns
    std::vector<Finding> findings;
};

struct StepAnalysis {
    std::string name;
    TimeNs start_ns = 0, end_ns = 0;  // GPU window of the step
    OverlapMetrics metrics;
    Bottleneck bottleneck;
    InterferenceMetrics interference;
    std::optional<WaitTransferMetrics> wait;  // two or more devices
};

struct DeviceAnalysis {
    int processIndex = 0;  // into Capture::processes
    int rank = -1;
    std::string host;
    int64_t pid = 0;
    uint32_t device = 0;
    OverlapMetrics totals;  // over the device's span
    std::vector<StepAnalysis> steps;
    std::vector<CollectiveInstance> collectives;  // start-sorted
    std::vector<Finding> findings;  // over the whole span
    InterferenceMetrics interference;                // over the whole span
    std::vector<SignatureInterference> signatures;   // with overlapped kernels, largest slowdown first
    std::optional<WaitTransferMetrics> wait;         // two or more devices
    std::optional<int> last_arrivals;                // groups this device started strictly last
    std::optional<TimeNs> delay_caused_ns;           // sum of (last - second-latest start) there
    std::optional<TimeNs> clock_shift_ns;            // with --align collectives
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
};

// The same collective seen on every rank.
struct MatchedCollective {
    std::string collective;
    std::optional<uint64_t> commHash, seqNumber;
    // (device index in Analysis::devices, collective index in that device)
    std::vector<std::pair<int, int>> instances;
    TimeNs skew_ns = 0;      // latest start - earliest start: waiting for the slowest rank
    TimeNs transfer_ns = 0;  // earliest end after the last arrival: time actually moving data
};

struct RankSpread {
    // Over devices, per step index present on all of them.
    TimeNs step_time_min_ns = 0, step_time_median_ns = 0, step_time_max_ns = 0;
    std::optional<double> overlap_ratio_min, overlap_ratio_median, overlap_ratio_max;
};

struct Analysis {
    AnalysisSettings settings;
    std::vector<DeviceAnalysis> devices;
    OverlapMetrics summary;  // ns summed over devices, ratios from the sums
    std::vector<MatchedCollective> matched;  // multi-rank only
    TimeNs total_skew_ns = 0;
    std::optional<RankSpread> spread;        // multi-rank only
    uint64_t droppedRecords = 0;             // over processes, as far as known
    std::vector<std::string> warnings;
};

// Throws std::invalid_argument for an invalid regex in the settings.
Analysis analyze(const Capture& capture, const AnalysisSettings& settings = {});

// analyze() in two phases, so that processes can be analysed apart (one file
// at a time, on several threads) and their captures freed before the
// cross-device part. Appends one DeviceAnalysis per device of `capture` to
// `out.devices` (processIndex into capture.processes) and each device's
// exposed communication M ∖ C to `exposedOfDevice`.
// `warningProcess`, when given, gets the process index of each warning added.
void analyzeProcesses(const Capture& capture, const AnalysisSettings& settings, Analysis& out,
                      std::vector<IntervalSet>& exposedOfDevice,
                      std::vector<int>* warningProcess = nullptr);
// The summary and everything across devices: matching, --align collectives,
// waiting versus transfer, rank spread. `processes` bounds processIndex.
void finishAnalysis(Analysis& a, std::vector<IntervalSet>& exposedOfDevice, size_t processes);

}  // namespace osc

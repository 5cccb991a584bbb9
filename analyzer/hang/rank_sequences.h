// Each rank's collectives per communicator, in the order it called them,
// whatever the input: NCCL plugin rows (one communicator per commHash,
// numbered per collective type as NCCL numbers them), Flight Recorder
// entries and PyTorch profiler traces naming process groups (one
// communicator per process group, numbered over all types by PyTorch's Seq,
// or by trace order without it), or collective kernels in start order (no
// communicator known: one for the whole job, numbered per type as
// docs/design.md section 4 matches them). The hang analysis reads only this.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/import/flight_recorder.h"

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace osc::hang {

enum class Source { NcclPlugin, FlightRecorder, PyTorchSeq, PyTorchGroupOrder, KernelOrder };
// "nccl-plugin", "flight-recorder", "pytorch-seq", "pytorch-group-order",
// "kernel-order": also what numbers the calls (NCCL's count per type,
// PyTorch's per group, a group's calls in trace order, or kernel order).
std::string toString(Source source);

// What says a rank entered (and perhaps completed) a call.
enum class Evidence {
    PluginRow,         // an OVERLAPSCOPE_NCCL_COLL row; completed when it has a GPU end
    Kernel,            // a collective kernel; completed unless it never ended
    UnfinishedLaunch,  // a launch inside NCCL's own NVTX range whose GPU work never came
    FlightRecorder,    // a Flight Recorder entry; completed when its state says so
    Operator,          // a PyTorch operator numbered by Seq whose kernel never came
};
std::string toString(Evidence evidence);

// A call's place in its communicator. `collective` is set where the source
// numbers each collective type on its own (AllReduce #17 and AllGather #17
// are different calls), empty where one number counts them all.
struct SlotKey {
    std::string collective;
    uint64_t seq = 0;
    auto operator<=>(const SlotKey&) const = default;
};

struct Call {
    SlotKey slot;
    std::string collective;  // AllReduce, all_reduce, ...
    std::string dtype;       // as the source names it; "" unknown
    std::optional<uint64_t> bytes;
    std::string shapes;  // Flight Recorder tensor shapes, "[[1024], [1024]]"; "" otherwise
    TimeNs enteredNs = 0;
    bool completed = false;
    std::optional<TimeNs> completedNs;  // when known (not when implied by a later call)
    Evidence evidence = Evidence::PluginRow;
};

struct HostItem {
    std::string name;
    TimeNs startNs = 0, endNs = 0;
};

// What a rank's host was last seen doing, and the last time it recorded anything.
struct HostActivity {
    std::optional<HostItem> apiCall, range, cpuOp;
    std::optional<HostItem> flightRecorderEntry;  // the dump's newest entry
    std::string flightRecorderState;              // that entry's state, thread
    std::optional<TimeNs> lastSeenNs;
};

struct RankProgress {
    int rank = -1, commRank = -1;  // global rank; rank in the communicator (-1 unknown)
    std::string label;             // "rank 3 (host:pid)"
    std::string source;            // the file it came from
    std::vector<Call> calls;       // in the order the rank called them
    HostActivity host;
    // Launches whose GPU work never came, NCCL's or not (kernel order and
    // plugin inputs): a GPU blocked behind something, or lost at a kill.
    uint64_t unfinishedLaunches = 0;
    std::optional<TimeNs> firstUnfinishedLaunchNs;
};

struct CommunicatorProgress {
    std::string id;  // "0x5e1f0c0ffee15eed", "pg 0 (default_pg)", "pg 0" (profiler traces), "kernel order"
    Source source = Source::NcclPlugin;
    bool seqPerCollective = true;  // SlotKey::collective is set
    int size = -1;                 // members the communicator has; -1 unknown
    std::vector<RankProgress> ranks;
};

struct JobSequences {
    std::vector<std::string> inputs;
    std::vector<CommunicatorProgress> communicators;
    TimeNs endNs = 0;         // the last time anything was recorded
    bool endKnown = false;    // false for Flight Recorder dumps alone: no dump time
    int64_t originUtcNs = 0;  // Unix ns of time 0
    std::vector<std::string> warnings;
};

// A capture's ranks: plugin communicators where the process has plugin rows,
// else PyTorch's process groups where its trace numbers collectives by Seq,
// else its devices' collective kernels in one "kernel order" communicator.
JobSequences sequencesFromCapture(const Capture& capture);

// Dumps' process groups; times relative to `originUtcNs` (a capture loaded
// beside them), or to the earliest time in the dumps when absent.
JobSequences sequencesFromFlightRecorder(const std::vector<FlightRecorderDump>& dumps,
                                         std::optional<int64_t> originUtcNs = std::nullopt);

// Marks every call before a completed one completed (a communicator's
// collectives complete in order on each rank).
void completeInOrder(std::vector<Call>& calls);

}  // namespace osc::hang

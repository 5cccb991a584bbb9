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
#include "analyzer/hang/flight_recorder.h"

#include <compare>
#include <cstdint>
#include <functional>
#include <memory>
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
    StatusTable,       // a Flight Recorder dump's pg_status: enqueued, no entry of it left in the buffer
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
    std::string collective;         // AllReduce, all_reduce, ...; "" unknown (pg_status evidence)
    std::string dtype;              // as the source names it; "" unknown
    std::optional<uint64_t> bytes;  // the inputs' (NCCL's count times the element size)
    std::string shapes;             // Flight Recorder tensor shapes, "[[1024], [1024]]"; "" otherwise
    TimeNs enteredNs = 0;
    bool completed = false;
    std::optional<TimeNs> completedNs;  // when known (not when implied by a later call)
    Evidence evidence = Evidence::PluginRow;
    // Added later, kept last so that aggregate initialisers of the fields above still read.
    std::optional<uint64_t> outputBytes;  // the outputs' (Flight Recorder only)
    bool enteredKnown = true;             // false: the input holds no (plausible) time for it
    std::optional<TimeNs> gpuStartNs;     // when its kernel began, where a capture says
    // Where the program called it (Flight Recorder dumps with stack frames).
    std::shared_ptr<const FlightRecorderFrame> frame;
};

struct HostItem {
    std::string name;
    TimeNs startNs = 0, endNs = 0;
    bool timeKnown = true;  // false: the input gives it no (plausible) time
};

// What a rank's host was last seen doing, and the last time it recorded anything.
struct HostActivity {
    std::optional<HostItem> apiCall, range, cpuOp;
    std::optional<HostItem> flightRecorderEntry;                     // the dump's newest entry
    std::string flightRecorderState;                                 // that entry's state, thread
    std::shared_ptr<const FlightRecorderFrame> flightRecorderFrame;  // where the program made it
    std::optional<TimeNs> lastSeenNs;
};

// A Flight Recorder dump's pg_status for one group: the process group's own
// count of what it enqueued, started and completed, whatever the ring
// buffer still holds (nullopt: none yet, or not counted).
struct GroupStatus {
    std::optional<uint64_t> enqueued, started, completed;
    // How the status was tied to the group: "entries" (the dump's entries
    // name its pg_id), "only group", "creation order" (numeric group names in
    // order, as the dump's entries confirm).
    std::string tiedBy;
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
    // Flight Recorder: the group's pg_status (applied to `calls` already:
    // calls it counts as completed are completed, and the call it counts as
    // enqueued and not completed is there even when the buffer lost it).
    std::optional<GroupStatus> status;
    // Flight Recorder: `calls` are the newest of a ring buffer, so earlier
    // calls may be missing; where it holds none and no status says more,
    // nothing is known of this rank's progress.
    bool ringBuffer = false;
};

struct CommunicatorProgress {
    std::string id;  // "0x5e1f0c0ffee15eed", "pg 0 (default_pg)", "pg 0" (profiler traces), "kernel order"
    Source source = Source::NcclPlugin;
    bool seqPerCollective = true;  // SlotKey::collective is set
    int size = -1;                 // members the communicator has; -1 unknown
    std::vector<RankProgress> ranks;
    // The members' global ranks by rank in the communicator, where the
    // input lists them (Flight Recorder's pg_config); empty otherwise.
    std::vector<int64_t> memberRanks;
    // A capture's communicator whose calls are those of a Flight Recorder
    // group (joined on rank, collective and time): that group's id. Its
    // evidence goes to the group's verdict instead of one of its own.
    std::string joinedTo;
};

struct JobSequences {
    std::vector<std::string> inputs;
    std::vector<CommunicatorProgress> communicators;
    std::vector<int> inputRanks;  // global ranks some input holds, sorted
    TimeNs endNs = 0;             // the last time anything was recorded
    bool endKnown = false;        // false for Flight Recorder dumps alone: no dump time
    int64_t originUtcNs = 0;      // Unix ns of time 0
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

// The same, one dump at a time: each dump becomes its ranks' calls as it is
// added and is dropped, so a job of many dumps, or one of a million entries,
// is held as calls only. Two dumps of one rank: the newer is read.
class FlightRecorderSequences {
public:
    explicit FlightRecorderSequences(std::optional<int64_t> originUtcNs = std::nullopt);
    ~FlightRecorderSequences();
    FlightRecorderSequences(const FlightRecorderSequences&) = delete;
    FlightRecorderSequences& operator=(const FlightRecorderSequences&) = delete;
    void add(FlightRecorderDump dump);
    // Reads and adds dump files, on `jobs` threads (0: the machine's cores),
    // in the order given whatever the threads do; `progress` after each.
    // Throws CaptureError for the first file in that order that fails.
    void addFiles(const std::vector<std::string>& paths, int jobs = 0,
                  const std::function<void(size_t done, size_t total)>& progress = {});
    JobSequences finish();

private:
    struct State;
    struct Prepared;  // one dump as its rank's groups, made on any thread
    static Prepared prepare(FlightRecorderDump dump);
    void merge(Prepared& dump);
    std::unique_ptr<State> state_;
};

// Marks every call before a completed one completed (a communicator's
// collectives complete in order on each rank).
void completeInOrder(std::vector<Call>& calls);

}  // namespace osc::hang

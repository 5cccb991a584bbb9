// PyTorch's Flight Recorder dumps in JSON (torch.distributed's NCCL trace
// buffer: `_dump_nccl_trace_json`, or a pickled dump converted to JSON): the
// collectives each process group entered, with sequence numbers, sizes and
// state. Field names and their meaning follow PyTorch's
// torch/csrc/distributed/c10d/FlightRecorder*.hpp and tools/flight_recorder
// (docs/formats.md lists the versions read and what each added).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace osc {

struct FlightRecorderEntry {
    int64_t recordId = -1, pgId = -1;
    std::string pgName, pgDesc;  // "process_group": [name, description]
    // collective_seq_id counts the group's collectives of every type (one
    // per kernel launch: a coalesced group shares one); p2p_seq_id its
    // sends and receives; op_id every operation, one per op in a group.
    int64_t collectiveSeqId = -1, p2pSeqId = -1, opId = -1;
    std::string profilingName;  // "nccl:all_reduce", "nccl:send 0->1"
    int64_t timeCreatedNs = 0;  // wall clock, ns since the Unix epoch
    std::optional<double> durationMs;
    std::vector<std::vector<int64_t>> inputSizes, outputSizes;
    std::vector<std::string> inputDtypes, outputDtypes;  // c10 names: Float, BFloat16, ...
    enum class State { Scheduled, Started, Completed } state = State::Scheduled;
    // When the watchdog saw the kernel start / complete; absent before.
    std::optional<int64_t> timeDiscoveredStartedNs, timeDiscoveredCompletedNs;
    bool retired = false, isP2P = false;
    int64_t timeoutMs = 0;
    std::string threadName, threadId;  // version 2.10 on; empty before
};

struct FlightRecorderGroup {
    std::string name, desc;
    std::vector<int64_t> ranks;  // global ranks of the members
};

// pg_status: the group's last enqueued, started and completed sequence
// numbers as the process group counted them (-1: none yet).
struct FlightRecorderGroupStatus {
    int64_t lastEnqueued = -1, lastStarted = -1, lastCompleted = -1;
};

struct FlightRecorderDump {
    std::string path;
    std::string version;  // "2.10"
    // The dump holds no global rank: PyTorch names the file <prefix><rank>
    // (nccl_trace_rank_3) and its own tools take the rank from there.
    int rank = -1;
    std::string commLibVersion;                                // comm_lib_version, or nccl_version (2.5-2.9)
    std::map<std::string, FlightRecorderGroup> groups;         // pg_config, by group name
    std::map<int64_t, FlightRecorderGroupStatus> groupStatus;  // pg_status, by pg_id
    std::vector<FlightRecorderEntry> entries;                  // oldest first, as dumped
};

// Reads one dump. Throws CaptureError naming the file: not JSON, a pickled
// dump (with the command that converts it), a major version other than 2,
// a field of the wrong type, or a name without the rank at its end.
FlightRecorderDump readFlightRecorderDump(const std::string& path);

// The rank at the end of a dump's file name, as PyTorch writes it
// (nccl_trace_rank_3, fr_dump_12.json); -1 when the name ends in no number.
int flightRecorderRankFromName(const std::string& path);

// The major.minor versions whose layout this reader was written from.
inline constexpr const char* kFlightRecorderVersionsRead = "2.3 to 2.10";

}  // namespace osc

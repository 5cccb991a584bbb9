// PyTorch's Flight Recorder dumps (torch.distributed's NCCL trace buffer):
// the collectives each process group of one rank entered, with sequence
// numbers, sizes and state, and each group's status table. Read from the
// pickle PyTorch writes (the watchdog's dump on a timeout, _dump_nccl_trace)
// or the JSON it writes (_dump_nccl_trace_json), or either converted by
// Python. Field names and meaning follow PyTorch's
// torch/csrc/distributed/c10d/FlightRecorder*.hpp and tools/flight_recorder;
// docs/formats.md lists the versions read and what each added.
//
// An entry is kept compact (texts are ids into the dump's `strings`), so a
// dump of a million entries fits in about a hundred megabytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osc {

// A time the dump does not hold, or one no clock could have given.
inline constexpr int64_t kNoFlightRecorderTime = std::numeric_limits<int64_t>::min();

// Where the program called a collective: the innermost stack frame outside
// PyTorch itself (the dump's "frames", pickles with stack traces only).
struct FlightRecorderFrame {
    std::string name, filename;
    int64_t line = -1;
};

struct FlightRecorderEntry {
    int64_t recordId = -1, pgId = -1;
    // collective_seq_id counts the group's collectives of every type (one
    // per kernel launch: a coalesced group shares one); p2p_seq_id its
    // sends and receives.
    int64_t collectiveSeqId = -1, p2pSeqId = -1;
    int64_t timeCreatedNs = kNoFlightRecorderTime;  // wall clock, ns since the Unix epoch
    int64_t timeDiscoveredCompletedNs = kNoFlightRecorderTime;
    // Elements of the input and output tensors, and bytes where every
    // dtype's size is known.
    uint64_t inputNumel = 0, outputNumel = 0;
    std::optional<uint64_t> inputBytes, outputBytes;
    // Ids into FlightRecorderDump::strings.
    uint32_t pgName = 0, pgDesc = 0;
    uint32_t profilingName = 0;  // "nccl:all_reduce", "nccl:send 0->1"
    uint32_t inputShapes = 0;    // "[[1024], [1024]]"
    uint32_t dtypes = 0;         // the inputs' c10 dtype names, "Float" or "Float,Half"
    uint32_t threadName = 0;     // version 2.10 on; "" before
    uint32_t frame = 0;          // 1 + index into FlightRecorderDump::frames; 0 none
    enum class State : uint8_t { Scheduled, Started, Completed } state = State::Scheduled;
    bool retired = false, isP2P = false;
};

struct FlightRecorderGroup {
    std::string name, desc;
    std::vector<int64_t> ranks;  // global ranks of the members, as pg_config lists them
    bool ranksKnown = false;     // false where "ranks" was missing or broken
};

// pg_status: the group's last enqueued, started and completed sequence
// numbers as the process group counted them (-1: none yet; started stays
// -1 unless PyTorch timed collectives).
struct FlightRecorderGroupStatus {
    int64_t lastEnqueued = -1, lastStarted = -1, lastCompleted = -1;
};

struct FlightRecorderDump {
    enum class Format { Json, Pickle };
    std::string path;
    Format format = Format::Json;
    std::string version;  // "2.10"
    // The dump holds no global rank: PyTorch names the file <prefix><rank>
    // (nccl_trace_rank_3) and its own tools take the rank from there.
    int rank = -1;
    std::string commLibVersion;                                // comm_lib_version, or nccl_version (2.5-2.9)
    std::map<std::string, FlightRecorderGroup> groups;         // pg_config, by group name
    std::map<int64_t, FlightRecorderGroupStatus> groupStatus;  // pg_status, by pg_id
    bool hasStatusTable = false;                               // the dump has pg_status, perhaps empty
    std::vector<FlightRecorderEntry> entries;                  // as dumped, oldest first (in time)
    std::vector<std::string> strings{""};                      // the entries' texts; 0 is ""
    std::vector<FlightRecorderFrame> frames;
    // What was odd but did not stop the reading, one line each (naming no file).
    std::vector<std::string> warnings;

    std::string_view text(uint32_t id) const { return id < strings.size() ? strings[id] : std::string_view(); }
    const FlightRecorderFrame* frameOf(const FlightRecorderEntry& e) const {
        return e.frame > 0 && e.frame <= frames.size() ? &frames[e.frame - 1] : nullptr;
    }
};

// Reads one dump, JSON or pickle. Throws CaptureError naming the file, in
// one line: neither JSON nor a pickle of protocol 2-5, an opcode that would
// run code, a major version other than 2, a field of the wrong type, or a
// name without the rank at its end. Entries that cannot be placed (a
// negative or wrapped sequence id, a record given twice) are left out and
// said in `warnings`; so are times no clock could have given.
FlightRecorderDump readFlightRecorderDump(const std::string& path);
// The same from bytes in memory (`path` names them in messages), handed to
// the readers `chunk` bytes at a time (tests and fuzzing split values so).
FlightRecorderDump readFlightRecorderDumpBytes(std::string_view bytes, const std::string& path,
                                               size_t chunk = SIZE_MAX);

// The rank at the end of a dump's file name, as PyTorch writes it
// (nccl_trace_rank_3, fr_dump_12.json, nccl_trace_rank_3.pkl); -1 when the
// name ends in no number.
int flightRecorderRankFromName(const std::string& path);

// The major.minor versions whose layout this reader was written from.
inline constexpr const char* kFlightRecorderVersionsRead = "2.3 to 2.10";

}  // namespace osc

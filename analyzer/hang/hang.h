// Hangs and desyncs (docs/design.md section 4d): per communicator, how far
// each rank got through the collectives, the collective the others wait in,
// the ranks that never entered it and what their hosts were last doing, and
// calls that ranks made differently. Read from a loaded capture (NCCL plugin
// rows, else collective kernels in order) and from PyTorch Flight Recorder
// dumps; the cross-rank part is the same for both (rank_sequences.h).
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/hang/rank_sequences.h"
#include "analyzer/import/flight_recorder.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::hang {

enum class Verdict { Healthy, Hang, Desync };
std::string toString(Verdict verdict);

// The collective some ranks wait in: entered, never completed.
struct HungCollective {
    SlotKey slot;
    std::string collective;
    std::vector<int> waitingRanks;  // indexes into CommunicatorProgress::ranks
    TimeNs waitingSinceNs = 0;      // the earliest entry among the waiting ranks
    TimeNs waitedNs = 0;            // from then to the end of the inputs
};

// A rank that never entered the hung collective.
struct StuckRank {
    int communicator = -1;  // index into HangAnalysis::communicators
    int member = -1;        // index into its ranks; -1: no input holds this rank
    int rank = -1, commRank = -1;
    std::string label;
    // Where this rank waits instead, when it waits in another collective of
    // the communicator (a collective the others never called there).
    std::optional<Call> waitingIn;
};

// One (communicator, sequence number) that ranks called differently.
struct Desync {
    int communicator = -1;
    SlotKey slot;
    std::string field;  // "collective", "bytes" or "dtype"
    struct Part {
        int member = -1;
        std::string collective, dtype;
        std::optional<uint64_t> bytes;
    };
    std::vector<Part> parts;  // one per rank that entered it, in member order
};

// A healthy job captured while running has collectives in flight: waited on
// for less than this before the inputs end, a call counts as in flight, not
// hung (`hang --min-wait-ms`, the GUI).
inline constexpr TimeNs kDefaultMinWaitNs = 1'000'000'000;

struct HangSettings {
    TimeNs minWaitNs = kDefaultMinWaitNs;
};

struct HangAnalysis {
    std::vector<std::string> inputs;
    std::vector<CommunicatorProgress> communicators;
    std::vector<std::optional<HungCollective>> hung;  // per communicator
    std::vector<StuckRank> stuck;
    std::vector<Desync> desyncs;
    // The hung collective waited on the longest: where to look first.
    int firstMissingCommunicator = -1;
    Verdict verdict = Verdict::Healthy;
    TimeNs endNs = 0;  // the last time any input recorded, on the inputs' timeline
    // False for Flight Recorder dumps alone: they record no time of their own
    // (endNs is their newest entry), so how long a call was waited in is unknown.
    bool endKnown = false;
    // For Flight Recorder dumps: the Unix time of the timeline's 0.
    int64_t originUtcNs = 0;
    std::vector<std::string> warnings;
};

// The verdict over sequences already built.
HangAnalysis analyzeSequences(JobSequences sequences, const HangSettings& settings = {});

// Everything from one loaded capture and any number of Flight Recorder dumps
// (either may be empty); communicators of both kinds are reported side by side.
HangAnalysis analyzeHang(const Capture* capture, const std::vector<FlightRecorderDump>& dumps,
                         const HangSettings& settings = {});

}  // namespace osc::hang

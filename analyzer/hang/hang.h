// Hangs and desyncs (docs/design.md section 4d): per communicator, how far
// each rank got through the collectives, the collective the others wait in,
// the ranks that never entered it and what their hosts were last doing, and
// calls that ranks made differently. Read from a loaded capture (NCCL plugin
// rows, else collective kernels in order) and from PyTorch Flight Recorder
// dumps; the cross-rank part is the same for both (rank_sequences.h). Given
// both, a capture's communicator that is a dump's group joins it (on rank,
// collective and time): the dump says which call each rank is in, the
// capture what its GPU did with it.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/hang/flight_recorder.h"
#include "analyzer/hang/rank_sequences.h"

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
    bool sinceKnown = true;         // false: no waiting rank's entry has a time
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
    // For HangAnalysis::uncertain: why the sizes may differ and be right.
    std::string note;
};

// What a capture joined to a dump's group says of one member's call at the
// group's hung collective (or, for a stuck member, of its GPU's last
// collective of the group).
struct GpuState {
    int communicator = -1, member = -1;  // the dump's group and member
    enum class Kind {
        Finished,       // its kernel ended
        Running,        // its kernel began and had not ended when the capture stopped
        NotStarted,     // NCCL had the call, its kernel never began
        NeverLaunched,  // the capture holds no launch of it, though it ran past its entry
        CaptureEnded,   // the capture stopped before the call was made
    } kind = Kind::NeverLaunched;
    std::optional<TimeNs> at;  // when it began or ended
    std::string captureCommunicator;
    std::string call;  // the capture's call, where it is another than the dump's ("AllReduce #5")
};
std::string toString(GpuState::Kind kind);

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
    // Members whose inputs cannot tell whether they entered a hung
    // collective (a dump whose buffer holds nothing of the group and whose
    // status cannot be tied to it): neither stuck nor waiting.
    std::vector<StuckRank> unknown;
    std::vector<Desync> desyncs;
    // Sizes that differ where the collective may allow it (an uneven
    // all-to-all whose totals disagree, a collective whose size rule is not
    // known): said, never a desync.
    std::vector<Desync> uncertain;
    std::vector<GpuState> gpu;
    std::vector<int> inputRanks;  // global ranks some input holds
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
// (either may be empty); a capture's communicator that is one of the dumps'
// groups joins it, the others are reported side by side.
HangAnalysis analyzeHang(const Capture* capture, const std::vector<FlightRecorderDump>& dumps,
                         const HangSettings& settings = {});
// The same with the dumps already turned into sequences, one at a time
// (FlightRecorderSequences, rank_sequences.h): what `overlapscope hang`
// does, so that many or large dumps are never held whole.
HangAnalysis analyzeCaptureAndDumps(const Capture* capture, std::optional<JobSequences> dumps,
                                    const HangSettings& settings = {});

}  // namespace osc::hang

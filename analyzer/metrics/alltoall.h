// All-to-all exchanges (docs/metrics.md section 7f): per step, bytes per rank
// pair where the rows or trace arguments give them, the imbalance over ranks
// (max / mean of bytes and of transfer time), exposed all-to-all time, and a
// finding naming the overloaded rank.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/step_keys.h"

#include <climits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace osc {

// Marks the all-to-all operations of one device (CollectiveInstance::allToAll):
// an AllToAll collective (kernel name or plugin row), or a SendRecv kernel
// that sends to and receives from every other rank of a communicator of at
// least three ranks. With two ranks an exchange in both directions is a
// pipeline's fused send and receive as often as an all-to-all, so it is not
// called one.
void markAllToAll(std::vector<CollectiveInstance>& ops);

// What one operation moved to and from other ranks: sent and received from
// its send/receive parts (a part to its own rank is a local copy and does not
// count), or only the total, the plugin's bytes, without parts.
struct AllToAllBytes {
    std::optional<uint64_t> sent, received;
    std::optional<uint64_t> total;
};
AllToAllBytes allToAllBytes(const CollectiveInstance& op);

// The all-to-all balance in pieces, for a caller that holds one device at a
// time (analyzer/crossrank's engine).
//
// One all-to-all operation of a device.
struct AllToAllOp {
    TimeNs start_ns = 0, end_ns = 0;
    int step = -1;
    TimeNs transfer_ns = 0;  // after its exchange's last arrival; its duration outside matched exchanges
    AllToAllBytes bytes;
};
// Sets dev.alltoall and its steps' from its all-to-all operations (in its
// order) and its exposed communication M ∖ C (nullptr: all of it exposed).
void deviceAllToAll(DeviceAnalysis& dev, const std::vector<AllToAllOp>& ops, const IntervalSet* exposed);

// Per step of the job, over ranks: the matched exchanges and what each rank did in them.
class AllToAllSteps {
public:
    // A matched exchange in step `key` (its first instance's step) whose
    // instances started first at `firstStart`.
    void exchange(const StepKey& key, TimeNs firstStart);
    // One instance of an exchange of step `key`.
    void instance(const StepKey& key, int device, TimeNs transfer_ns, TimeNs exposed_ns,
                  const std::optional<uint64_t>& bytes);
    // Bytes one instance sent from device `src` to device `dst`.
    void pair(const StepKey& key, int src, int dst, uint64_t bytes);
    // Needs each device's alltoall (deviceAllToAll) and step keys: each
    // rank's exposed time in its own window of the step, the imbalance, the
    // overloaded rank and its finding; fills Analysis::alltoall.
    void finish(Analysis& a, const std::vector<std::vector<StepKey>>& keysOf);

private:
    struct Build {
        AllToAllStep out;
        TimeNs firstStart = INT64_MAX;
        std::map<int, size_t> rankOf;    // device -> index in out.ranks
        std::map<int, bool> bytesKnown;  // device -> every op's bytes known
        std::map<std::pair<int, int>, uint64_t> pairs;
    };
    std::map<StepKey, Build> steps_;
};

}  // namespace osc

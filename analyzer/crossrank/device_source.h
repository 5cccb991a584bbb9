// What the cross-rank half of the analysis reads of each device, and the
// interface it reads it through. The engine (engine.h) keeps a small header
// per device in memory and reads the rest, everything proportional to a
// device's operations, as streams when a pass needs them. Two sources serve
// it: MemorySource (memory_source.h) over an in-memory Analysis, and the
// partial results' PartSource (analyzer/partial/part_source.h) over files
// and scratch files on disk. The engine cannot tell them apart, so a report
// made in memory and one merged from partials are the same computation.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace osc::crossrank {

// One step window of a device and what the rank spread and waiting versus
// transfer read of it.
struct StepHeader {
    std::string name;
    TimeNs start_ns = 0, end_ns = 0, window_ns = 0, comm_ns = 0, overlap_ns = 0, exposed_comm_ns = 0;
};

// What stays in memory per device for the whole cross-rank analysis.
struct DeviceHeader {
    int rank = -1;
    std::string host;
    int64_t pid = 0;
    uint32_t device = 0;
    OverlapMetrics totals;  // the ns fields; the ratios are not read
    std::vector<StepHeader> steps;
    // The communicators it is in, as (hash, its rank there).
    std::vector<std::pair<uint64_t, int32_t>> commRanks;
    // Per step with micro-batch compute (docs/metrics.md 7e).
    std::vector<DeviceIntervals::MicroBatches> microbatches;
    // How many records its p2p(), alltoall() and leadUps() streams hold, so
    // that passes skip devices without them unread.
    uint32_t p2pRecords = 0, alltoallOps = 0, leadUps = 0;
    // The GPU's model (DeviceAnalysis::gpu): its link's peak bus bandwidth.
    std::string gpu;
    std::string gpuUuid;  // "" unknown; devices with the same one share a GPU
};

// The matching key of docs/design.md section 4 "Multi-rank": the NCCL
// plugin's identity, or the collective and its ordinal on its device.
struct CollectiveKey {
    int scheme = 1;  // 0: (commHash, collective, seqNumber); 1: (collective, ordinal)
    uint64_t commHash = 0;
    uint32_t name = 0;  // into the source's collective names
    uint64_t seq = 0;   // seqNumber or ordinal
    bool operator==(const CollectiveKey&) const = default;
};
inline constexpr uint32_t kNoKey = ~0u;  // an operation with no collective type: never matched

// One communication operation of a device, in its device's order
// (DeviceAnalysis::collectives).
struct OpRecord {
    uint32_t key = kNoKey;  // into the source's keys
    TimeNs start_ns = 0, end_ns = 0;
};

// One send or receive of a device's point-to-point operation (a SendRecv
// kernel, or an all-to-all the rows describe), with what the operation
// says of its communicator. A SendRecv kernel without parts has one record
// with `parts` 0. Plain bytes: partials keep these in scratch files.
struct P2pPartRecord {
    uint64_t commHash = 0;
    uint64_t bytes = 0;
    uint64_t seq = 0;       // P2pPart::seq when hasSeq
    uint32_t op = 0;        // index in the device's operations
    int32_t peer = -1;      // rank in the communicator
    int32_t commRank = -1;  // the device's own rank there
    uint8_t send = 0, hasCommHash = 0, sendRecv = 0, parts = 1, hasSeq = 0;
};

// One all-to-all operation of a device (docs/metrics.md 7f).
struct AllToAllRecord {
    uint32_t op = 0;
    int32_t step = -1;
    TimeNs duration_ns = 0, exposed_ns = 0;
    uint64_t sent = 0, received = 0, total = 0;
    uint8_t hasSent = 0, hasReceived = 0, hasTotal = 0;
};

// What docs/design.md 4d needs of one operation besides its times, by
// operation: nccl-tests' bus bytes and factor (each known or not), its
// exposed time and its step.
struct BandwidthRecord {
    uint64_t busBytes = 0;
    double factor = 0;
    TimeNs exposed_ns = 0;
    int32_t step = -1;
    uint8_t hasBytes = 0, hasFactor = 0;
    uint8_t allToAll = 0;  // counted as an AllToAll whatever its kernel
};

// A device's lead-ups with what filled them (DeviceIntervals): read only for
// the ranks a straggler is compared with.
struct LeadUpDetail {
    std::vector<DeviceIntervals::LeadUp> leadUps;
    std::vector<DeviceIntervals::LeadUpIncrement> increments;
    std::vector<std::string> names;
};

// The devices of a job in job order: processes as Capture::finalize orders
// them (known ranks first, by rank, then host and pid), a process's devices
// adjacent. Times in the streams are on each device's own timeline;
// originShift() moves them to the job's.
class DeviceSource {
public:
    virtual ~DeviceSource() = default;

    virtual size_t deviceCount() const = 0;
    virtual size_t processCount() const = 0;
    virtual const DeviceHeader& header(size_t device) const = 0;
    virtual int processOf(size_t device) const = 0;
    virtual TimeNs originShift(size_t device) const = 0;
    virtual const std::vector<CollectiveKey>& keys() const = 0;
    virtual const std::vector<std::string>& collectiveNames() const = 0;

    virtual std::vector<OpRecord> ops(size_t device) const = 0;
    virtual IntervalSet exposed(size_t device) const = 0;                     // M ∖ C over the whole capture
    virtual std::vector<P2pPartRecord> p2p(size_t device) const = 0;          // by operation
    virtual std::vector<AllToAllRecord> alltoall(size_t device) const = 0;    // by operation
    virtual IntervalSet compute(size_t device) const = 0;                     // C, only where it ran micro-batches
    virtual std::vector<BandwidthRecord> bandwidth(size_t device) const = 0;  // by operation
    // The lead-ups of its operations in steps, by operation (the increments
    // counted, not read); and the same with increments and names.
    virtual std::vector<DeviceIntervals::LeadUp> leadUps(size_t device) const = 0;
    virtual LeadUpDetail leadUpDetail(size_t device) const = 0;

    // The per-process warnings, in job order, and the records agents lost.
    virtual std::vector<std::string> warnings() const = 0;
    virtual std::optional<uint64_t> droppedRecords() const = 0;  // absent: no file said
};

}  // namespace osc::crossrank

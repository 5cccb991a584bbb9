// Partial results read back for the merge: per file the processes and their
// warnings, per device a small header held in memory (identity, totals, step
// windows) and where the rest lies on disk (its communication operations and
// exposed intervals in a scratch file, its report object in the partial it
// came from). Memory grows with the number of devices and steps, not with
// their collectives.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/byte_io.h"
#include "analyzer/partial/file_part.h"

#include <istream>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace osc::partial {

struct PartFile {
    std::string path;  // the capture file the section came from
    int64_t originUtcNs = 0;
    std::vector<PartProcess> processes;
    std::vector<std::string> loadWarnings;
    std::vector<std::pair<int, std::string>> warnings;  // (process, message)
    uint64_t droppedRecords = 0;
};

struct PartStep {
    std::string name;
    TimeNs start_ns = 0, end_ns = 0, window_ns = 0, comm_ns = 0, overlap_ns = 0, exposed_comm_ns = 0;
};

// One send or receive of a device's point-to-point operation (a SendRecv
// kernel, or an all-to-all the rows describe), with what the operation
// says of its communicator. A SendRecv kernel without parts has one record
// with `parts` 0.
struct P2pPartRecord {
    uint64_t commHash = 0;
    uint64_t bytes = 0;
    uint64_t seq = 0;        // P2pPart::seq when hasSeq
    uint32_t op = 0;         // index in the device's operations
    int32_t peer = -1;       // rank in the communicator
    int32_t commRank = -1;   // the device's own rank there
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

struct PartDevice {
    size_t file = 0;  // into PartSet::files
    int process = 0;  // into that file's processes
    int rank = -1;
    std::string host;
    int64_t pid = 0;
    uint32_t device = 0;
    OverlapMetrics totals;  // the ns fields; ratios are not carried
    std::vector<PartStep> steps;
    uint64_t opsAt = 0, exposedAt = 0;  // in PartSet's scratch file
    uint32_t ops = 0, exposed = 0;
    // Point-to-point and all-to-all operations and the pipeline (in
    // PartSet's scratch file, but for the few per-step micro-batches and the
    // device's communicators, which stay in memory).
    uint64_t p2pAt = 0, alltoallAt = 0, computeAt = 0;
    uint32_t p2pRecords = 0, alltoallOps = 0, compute = 0;
    std::vector<std::pair<uint64_t, int32_t>> commRanks;
    std::vector<DeviceIntervals::MicroBatches> microbatches;
    // (window, time): the idle-gap findings' times on the file's timeline,
    // window -1 for the device's own findings, else its step.
    std::vector<std::pair<int, TimeNs>> idleGapAt;
    size_t source = 0;  // where its report object lies
    uint64_t jsonAt = 0, jsonLength = 0;
};

// The matching key of DESIGN.md section 4 "Multi-rank": (plugin identity)
// or (collective, k-th of that collective on its device).
struct CollectiveKey {
    int scheme = 1;  // 0: (commHash, collective, seqNumber); 1: (collective, ordinal)
    uint64_t commHash = 0;
    uint32_t name = 0;  // into PartSet::collectiveNames
    uint64_t seq = 0;   // seqNumber or ordinal
    bool operator==(const CollectiveKey&) const = default;
};
inline constexpr uint32_t kNoKey = ~0u;  // an operation with no collective type: never matched

struct OpRecord {
    uint32_t key = kNoKey;  // into PartSet::keys
    TimeNs start_ns = 0, end_ns = 0;
};

class PartSet {
public:
    // A partial result file, all of it. Throws CaptureError naming the file.
    void addPartialFile(const std::string& path);
    // The pipeline's own sections (writeFileSection output, no header) lying in
    // `scratch` at [offset, offset + length), which must outlive this set.
    void addSections(const ScratchFile& scratch, uint64_t offset, uint64_t length, const std::string& name);
    void setHeader(const AnalysisSettings& settings, std::vector<std::string> inputs);

    AnalysisSettings settings;
    std::vector<std::string> inputs;  // of every partial, in order
    bool alignAgreed = true;          // false when partials asked for different --align
    std::vector<PartFile> files;
    std::vector<PartDevice> devices;
    std::vector<CollectiveKey> keys;
    std::vector<std::string> collectiveNames;

    // The readers' warnings of every file, in file order.
    std::vector<std::string> loadWarnings() const;

    std::vector<OpRecord> readOps(const PartDevice& d) const;
    IntervalSet readExposed(const PartDevice& d) const;
    std::vector<P2pPartRecord> readP2p(const PartDevice& d) const;
    std::vector<AllToAllRecord> readAllToAll(const PartDevice& d) const;
    IntervalSet readCompute(const PartDevice& d) const;
    // The device's report object as it was written (one line of JSON).
    std::unique_ptr<std::istream> openDeviceJson(const PartDevice& d) const;
    const std::string& sourceName(size_t source) const { return sources_[source].name; }

private:
    struct Source {
        std::string name, path;  // path empty: `scratch`
        const ScratchFile* scratch = nullptr;
    };
    struct KeyHash {
        size_t operator()(const CollectiveKey& k) const;
    };
    void readStream(std::istream& in, size_t source, uint64_t base, bool whole);
    void readDevice(const std::string& line, const std::string& name, size_t lineNo, PartDevice& d);
    uint32_t internName(const std::string& name);
    uint32_t internKey(const CollectiveKey& key);

    std::vector<Source> sources_;
    std::unordered_map<CollectiveKey, uint32_t, KeyHash> keyIndex_;
    std::unordered_map<std::string, uint32_t> nameIndex_;
    std::unique_ptr<ScratchFile> data_ = std::make_unique<ScratchFile>();
    bool haveHeader_ = false;
    std::string settingsText_;  // without align, as the first partial had it
};

}  // namespace osc::partial

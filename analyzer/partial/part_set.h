// Partial results read back for the merge: per file the processes and their
// warnings, per device a small header held in memory (identity, totals, step
// windows) and where the rest lies on disk (its communication operations and
// exposed intervals in a scratch file, its report object in the partial it
// came from). Memory grows with the number of devices and steps, not with
// their collectives.
#pragma once

#include "analyzer/crossrank/byte_io.h"
#include "analyzer/crossrank/collective_keys.h"
#include "analyzer/crossrank/device_source.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/partial/file_part.h"
#include "analyzer/partial/prepared_device.h"

#include <cstdint>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace osc::partial {

struct PartFile {
    std::string path;  // the capture file the section came from
    int64_t originUtcNs = 0;
    std::vector<PartProcess> processes;
    std::vector<std::string> loadWarnings;
    bool savedNothing = false;                          // FilePart::savedNothing
    std::vector<std::pair<int, std::string>> warnings;  // (process, message)
    std::optional<uint64_t> droppedRecords;             // null in the file: it did not say
};

// One device of a partial: its header (what the cross-rank engine keeps in
// memory), where its streams lie in PartSet's scratch file, and where its
// report object lies.
struct PartDevice {
    size_t file = 0;  // into PartSet::files
    int process = 0;  // into that file's processes
    crossrank::DeviceHeader header;
    uint64_t opsAt = 0, exposedAt = 0, p2pAt = 0, alltoallAt = 0, computeAt = 0;
    uint32_t ops = 0, exposed = 0, compute = 0;
    // docs/design.md 4d: per operation its bandwidth record; the lead-ups,
    // their increments and the names (length-prefixed) they index.
    uint64_t bandwidthAt = 0, leadUpsAt = 0, incrementsAt = 0, namesAt = 0;
    uint32_t increments = 0, names = 0;
    uint64_t namesBytes = 0;
    // (window, time): the idle-gap findings' times on the file's timeline,
    // window -1 for the device's own findings, else its step.
    std::vector<std::pair<int, TimeNs>> idleGapAt;
    size_t source = 0;  // where its report object lies
    // The report object at [reportAt, reportAt + reportLength): one line of
    // report JSON, or (`binary`) the whole device in device_codec.h's bytes
    // in PartSet's scratch file.
    uint64_t reportAt = 0, reportLength = 0;
    bool binary = false;
    // Into PartSet's kept devices, where the device is held as analysed
    // (PreparedDevice::device); kNotKept: read from its report object.
    static constexpr size_t kNotKept = SIZE_MAX;
    size_t kept = kNotKept;
};

class PartSet {
public:
    // A partial result file, all of it. Throws CaptureError naming the file.
    void addPartialFile(const std::string& path);
    // The pipeline's own sections (writeFileSection output, no header) lying in
    // `scratch` at [offset, offset + length), which must outlive this set.
    void addSections(const crossrank::ScratchFile& scratch, uint64_t offset, uint64_t length, const std::string& name);
    // Where a file part's device records already lie (encodeFilePart's
    // spans): in `scratch` from `offset` on, used where they are (the
    // scratch must outlive this set). None where every device is kept in
    // memory (PreparedDevice::device).
    struct EncodedDevices {
        std::vector<DeviceSpan> spans;
        const crossrank::ScratchFile* scratch = nullptr;
        uint64_t offset = 0;
    };
    // One file analysed in this process or on a Dask worker (analyzer/job):
    // no JSON on the way, its devices kept whole in binary, as `encoded`
    // holds them (never encoded again).
    void addFilePart(const FilePart& part, const EncodedDevices& encoded);
    // The same for a part whose devices were prepared where they were
    // analysed (prepared_device.h): `head` is the file part without its
    // devices, `prepared` and `encoded` one entry per device.
    void addPrepared(const FilePart& head, std::vector<PreparedDevice>&& prepared, const EncodedDevices& encoded);
    void setHeader(const AnalysisSettings& settings, std::vector<std::string> inputs);

    AnalysisSettings settings;
    std::vector<std::string> inputs;  // of every partial, in order
    bool alignAgreed = true;          // false when partials asked for different --align
    std::vector<PartFile> files;
    std::vector<PartDevice> devices;
    crossrank::KeyTable keys;  // of every device's operations

    // The readers' warnings of every file, in file order.
    std::vector<std::string> loadWarnings() const;
    // The capture files that did not finish and saved nothing, in file order.
    std::vector<std::string> savedNothing() const;

    std::vector<crossrank::OpRecord> readOps(const PartDevice& d) const;
    IntervalSet readExposed(const PartDevice& d) const;
    std::vector<crossrank::P2pPartRecord> readP2p(const PartDevice& d) const;
    std::vector<crossrank::AllToAllRecord> readAllToAll(const PartDevice& d) const;
    IntervalSet readCompute(const PartDevice& d) const;
    std::vector<crossrank::BandwidthRecord> readBandwidth(const PartDevice& d) const;
    std::vector<DeviceIntervals::LeadUp> readLeadUps(const PartDevice& d) const;
    crossrank::LeadUpDetail readLeadUpDetail(const PartDevice& d) const;
    // The device's report object as it was written (one line of JSON).
    std::unique_ptr<std::istream> openDeviceJson(const PartDevice& d) const;
    // A `binary` device as it was analysed. A kept one is given once, moved
    // out (a merge reads each device once; a second read is a logic_error).
    DeviceAnalysis readDevice(const PartDevice& d) const;
    const std::string& sourceName(size_t source) const { return sources_[source].name; }

private:
    struct Source {
        std::string name, path;  // path empty: `scratch`
        const crossrank::ScratchFile* scratch = nullptr;
    };
    void readStream(std::istream& in, size_t source, uint64_t base, bool whole);
    void readDevice(const std::string& line, const std::string& name, size_t lineNo, PartDevice& d);
    // Throws CaptureError naming `where` when another file already gave this
    // device (the same capture, or overlapping partials, given twice).
    void refuseDuplicate(const PartDevice& d, const std::string& where);

    std::vector<Source> sources_;
    std::unique_ptr<crossrank::ScratchFile> data_ = std::make_unique<crossrank::ScratchFile>();
    // The devices held as analysed; empty once taken. Each is touched by
    // one reader only, so readers on several threads need no lock.
    mutable std::vector<std::optional<DeviceAnalysis>> kept_;
    bool haveHeader_ = false;
    std::string settingsText_;  // without align, as the first partial had it
    // (host, pid, rank, the file's time 0, device) -> (file, where it was read).
    std::map<std::tuple<std::string, int64_t, int, int64_t, uint32_t>, std::pair<size_t, std::string>> seen_;
};

}  // namespace osc::partial

// What a PartSet keeps of one device analysed in this process, made from the
// DeviceAnalysis where it was analysed, on any thread (prepareDevice): the
// cross-rank engine's header and record streams. A job's worker threads make
// these as they finish each file, so that the thread filling the set only
// numbers the operations' keys and files the records (PartSet::addPrepared),
// without reading the device back.
#pragma once

#include "analyzer/crossrank/device_source.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/file_part.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace osc::partial {

struct PreparedDevice {
    // An operation with what numbers its key (crossrank::KeyTable::Device::key).
    struct Op {
        uint32_t collective = 0;  // into `collectives`
        std::optional<uint64_t> commHash, seqNumber;
        TimeNs start_ns = 0, end_ns = 0;
    };
    int process = 0;
    crossrank::DeviceHeader header;
    std::vector<std::string> collectives;  // the names Op::collective indexes
    std::vector<Op> ops;
    IntervalSet exposed, compute;
    std::vector<crossrank::P2pPartRecord> p2p;
    std::vector<crossrank::AllToAllRecord> alltoall;
    std::vector<crossrank::BandwidthRecord> bandwidth;
    std::vector<DeviceIntervals::LeadUp> leadUps;
    std::vector<DeviceIntervals::LeadUpIncrement> leadUpIncrements;
    std::vector<std::string> leadUpNames;
    // The device itself, where the set's caller keeps every device anyway
    // (mergedAnalysis): the set holds it as analysed, and the merge takes it
    // from there instead of decoding its record again.
    std::optional<DeviceAnalysis> device;
};

PreparedDevice prepareDevice(const DeviceAnalysis& device, const DeviceIntervals& intervals);
// Every device of a file's part, each with its intervals (none where the
// part has fewer).
std::vector<PreparedDevice> prepareDevices(const FilePart& part);

// A file's part without its devices and intervals, and what the set keeps of
// each device (PartSet::addPrepared's arguments).
struct PreparedPart {
    FilePart head;
    std::vector<PreparedDevice> devices;
};
// `keep`: each device moved into its PreparedDevice::device.
PreparedPart preparePart(FilePart&& part, bool keep);

}  // namespace osc::partial

#include "analyzer/partial/prepared_device.h"

#include "analyzer/crossrank/device_records.h"

#include <unordered_map>

namespace osc::partial {

PreparedDevice prepareDevice(const DeviceAnalysis& device, const DeviceIntervals& intervals) {
    PreparedDevice p;
    p.process = device.processIndex;
    p.header = crossrank::headerOf(device, intervals);
    // A device has a handful of collective names over thousands of operations.
    std::unordered_map<std::string_view, uint32_t> names;
    p.ops.reserve(device.collectives.size());
    for (const CollectiveInstance& c : device.collectives) {
        const auto [it, added] = names.try_emplace(c.collective, static_cast<uint32_t>(p.collectives.size()));
        if (added) p.collectives.emplace_back(c.collective);
        p.ops.push_back({it->second, c.commHash, c.seqNumber, c.start_ns, c.end_ns});
    }
    p.exposed = intervals.exposed;
    p.compute = intervals.compute;
    p.p2p = crossrank::p2pRecordsOf(device);
    p.alltoall = crossrank::allToAllRecordsOf(device);
    p.bandwidth = crossrank::bandwidthRecordsOf(device);
    p.leadUps = intervals.leadUps;
    p.leadUpIncrements = intervals.leadUpIncrements;
    p.leadUpNames = intervals.leadUpNames;
    return p;
}

std::vector<PreparedDevice> prepareDevices(const FilePart& part) {
    static const DeviceIntervals kNone;
    const auto& devices = part.analysis.devices;
    std::vector<PreparedDevice> out;
    out.reserve(devices.size());
    for (size_t i = 0; i < devices.size(); ++i)
        out.push_back(prepareDevice(devices[i], i < part.intervals.size() ? part.intervals[i] : kNone));
    return out;
}

PreparedPart preparePart(FilePart&& part, bool keep) {
    PreparedPart out;
    out.devices = prepareDevices(part);
    if (keep)
        for (size_t d = 0; d < out.devices.size(); ++d) out.devices[d].device = std::move(part.analysis.devices[d]);
    part.analysis.devices.clear();
    part.intervals.clear();
    out.head = std::move(part);
    return out;
}

}  // namespace osc::partial

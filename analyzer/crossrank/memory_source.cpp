#include "analyzer/crossrank/memory_source.h"

#include "analyzer/crossrank/device_records.h"

#include <stdexcept>

namespace osc::crossrank {

MemorySource::MemorySource(const Analysis& analysis, const std::vector<DeviceIntervals>& intervals, size_t processes)
    : a_(analysis), iv_(intervals), processes_(processes) {
    const size_t n = analysis.devices.size();
    if (intervals.size() != n) throw std::logic_error("MemorySource: one DeviceIntervals per device");
    headers_.reserve(n);
    ops_.reserve(n);
    for (size_t d = 0; d < n; ++d) {
        headers_.push_back(headerOf(analysis.devices[d], intervals[d]));
        ops_.push_back(opRecordsOf(analysis.devices[d], keys_, n == 1));
    }
}

std::vector<P2pPartRecord> MemorySource::p2p(size_t device) const { return p2pRecordsOf(a_.devices[device]); }

std::vector<BandwidthRecord> MemorySource::bandwidth(size_t device) const {
    return bandwidthRecordsOf(a_.devices[device]);
}

std::vector<AllToAllRecord> MemorySource::alltoall(size_t device) const {
    return allToAllRecordsOf(a_.devices[device]);
}

}  // namespace osc::crossrank

// A device analysed in memory as the cross-rank engine reads it: its header
// and its streams. The one reading of which operations are point-to-point
// or all-to-all and which communicators a device is in; partial results
// store exactly these records (analyzer/partial/partial_format.cpp).
#pragma once

#include "analyzer/crossrank/collective_keys.h"
#include "analyzer/crossrank/device_source.h"

#include <utility>
#include <vector>

namespace osc::crossrank {

// Identity, totals, step windows, communicators, micro-batches and the
// counts of the p2p and all-to-all records.
DeviceHeader headerOf(const DeviceAnalysis& device, const DeviceIntervals& intervals);
// (communicator hash, the device's rank there), sorted, each once.
std::vector<std::pair<uint64_t, int32_t>> commRanksOf(const DeviceAnalysis& device);
// The sends and receives of its point-to-point operations (those with
// parts, and SendRecv kernels without any: one record with `parts` 0).
std::vector<P2pPartRecord> p2pRecordsOf(const DeviceAnalysis& device);
// Its all-to-all operations (CollectiveInstance::allToAll).
std::vector<AllToAllRecord> allToAllRecordsOf(const DeviceAnalysis& device);
// Its operations' bus bandwidth inputs (docs/design.md 4d), by operation.
std::vector<BandwidthRecord> bandwidthRecordsOf(const DeviceAnalysis& device);
// Its operations with their matching keys, numbered in `keys`; `alone`:
// the job's only device (KeyTable::Device).
std::vector<OpRecord> opRecordsOf(const DeviceAnalysis& device, KeyTable& keys, bool alone = false);

}  // namespace osc::crossrank

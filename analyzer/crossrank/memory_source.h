// The cross-rank engine's source over devices analysed in memory
// (analyzeProcesses over one loaded capture): everything is already on one
// timeline and in job order.
#pragma once

#include "analyzer/crossrank/collective_keys.h"
#include "analyzer/crossrank/device_source.h"

#include <vector>

namespace osc::crossrank {

class MemorySource : public DeviceSource {
public:
    // `analysis` and `intervals` (one per device) must outlive the source
    // and stay as they are while the engine runs.
    MemorySource(const Analysis& analysis, const std::vector<DeviceIntervals>& intervals, size_t processes);

    size_t deviceCount() const override { return headers_.size(); }
    size_t processCount() const override { return processes_; }
    const DeviceHeader& header(size_t device) const override { return headers_[device]; }
    int processOf(size_t device) const override { return a_.devices[device].processIndex; }
    TimeNs originShift(size_t) const override { return 0; }
    const std::vector<CollectiveKey>& keys() const override { return keys_.keys(); }
    const std::vector<std::string>& collectiveNames() const override { return keys_.names(); }

    std::vector<OpRecord> ops(size_t device) const override { return ops_[device]; }
    IntervalSet exposed(size_t device) const override { return iv_[device].exposed; }
    std::vector<P2pPartRecord> p2p(size_t device) const override;
    std::vector<AllToAllRecord> alltoall(size_t device) const override;
    IntervalSet compute(size_t device) const override { return iv_[device].compute; }
    std::vector<BandwidthRecord> bandwidth(size_t device) const override;
    std::vector<DeviceIntervals::LeadUp> leadUps(size_t device) const override { return iv_[device].leadUps; }
    LeadUpDetail leadUpDetail(size_t device) const override {
        return {iv_[device].leadUps, iv_[device].leadUpIncrements, iv_[device].leadUpNames};
    }

    std::vector<std::string> warnings() const override { return a_.warnings; }
    std::optional<uint64_t> droppedRecords() const override { return a_.droppedRecords; }

private:
    const Analysis& a_;
    const std::vector<DeviceIntervals>& iv_;
    size_t processes_;
    KeyTable keys_;
    std::vector<DeviceHeader> headers_;
    std::vector<std::vector<OpRecord>> ops_;
};

}  // namespace osc::crossrank

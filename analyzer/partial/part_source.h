// Partial results as the cross-rank engine's source: the devices of every
// file in job order (processes as Capture::finalize orders them, ties in
// file order) and each file's origin on the job's timeline (the earliest
// file's wall-clock origin is the job's time 0).
#pragma once

#include "analyzer/crossrank/device_source.h"
#include "analyzer/partial/part_set.h"

#include <vector>

namespace osc::partial {

class PartSource : public crossrank::DeviceSource {
public:
    explicit PartSource(const PartSet& parts);

    // The PartSet device of job device i.
    const PartDevice& part(size_t device) const { return parts_.devices[order_[device]]; }

    size_t deviceCount() const override { return order_.size(); }
    size_t processCount() const override { return processes_; }
    const crossrank::DeviceHeader& header(size_t device) const override { return part(device).header; }
    int processOf(size_t device) const override { return processOf_[device]; }
    TimeNs originShift(size_t device) const override { return fileShift_[part(device).file]; }
    const std::vector<crossrank::CollectiveKey>& keys() const override { return parts_.keys.keys(); }
    const std::vector<std::string>& collectiveNames() const override { return parts_.keys.names(); }

    std::vector<crossrank::OpRecord> ops(size_t device) const override { return parts_.readOps(part(device)); }
    IntervalSet exposed(size_t device) const override { return parts_.readExposed(part(device)); }
    std::vector<crossrank::P2pPartRecord> p2p(size_t device) const override { return parts_.readP2p(part(device)); }
    std::vector<crossrank::AllToAllRecord> alltoall(size_t device) const override {
        return parts_.readAllToAll(part(device));
    }
    IntervalSet compute(size_t device) const override { return parts_.readCompute(part(device)); }
    std::vector<crossrank::BandwidthRecord> bandwidth(size_t device) const override {
        return parts_.readBandwidth(part(device));
    }
    std::vector<DeviceIntervals::LeadUp> leadUps(size_t device) const override {
        return parts_.readLeadUps(part(device));
    }
    crossrank::LeadUpDetail leadUpDetail(size_t device) const override { return parts_.readLeadUpDetail(part(device)); }

    std::vector<std::string> warnings() const override { return warnings_; }
    std::optional<uint64_t> droppedRecords() const override;

private:
    const PartSet& parts_;
    std::vector<size_t> order_;      // job device -> PartSet device
    std::vector<int> processOf_;     // job process of each job device
    std::vector<TimeNs> fileShift_;  // per file: its origin on the job's timeline
    std::vector<std::string> warnings_;
    size_t processes_ = 0;
};

}  // namespace osc::partial

// Captures whose windows cover different steps: ranks attached one after
// another, a step capture that began later on one node, a rank that joined
// late. Collectives of a step only some ranks hold have nobody to be matched
// with, and collectives matched by their ordinal (no NCCL plugin numbers)
// would be matched with another step's. So the cross-rank half reads its
// devices through this source, which is its inner source but for ops(): an
// operation outside the steps every device holds gets no matching key, and
// ordinals count from the first of those steps. The report says so (note()).
//
// It applies when every device has at least 3 steps (those that launched
// GPU work on it), each device's step names are distinct (numbered steps:
// ProfilerStep#N and the like) and not every device holds the same ones;
// otherwise it changes nothing and costs nothing. Memory: 4 bytes per operation of the job while the engine runs.
#pragma once

#include "analyzer/crossrank/device_source.h"

#include <string>
#include <vector>

namespace osc::crossrank {

class CommonStepSource final : public DeviceSource {
public:
    explicit CommonStepSource(const DeviceSource& inner);

    // One sentence for the report's warnings ("" when nothing changed).
    const std::string& note() const { return note_; }
    bool restricted() const { return !keys_.empty(); }

    size_t deviceCount() const override { return inner_.deviceCount(); }
    size_t processCount() const override { return inner_.processCount(); }
    const DeviceHeader& header(size_t device) const override { return inner_.header(device); }
    int processOf(size_t device) const override { return inner_.processOf(device); }
    TimeNs originShift(size_t device) const override { return inner_.originShift(device); }
    const std::vector<CollectiveKey>& keys() const override { return inner_.keys(); }
    const std::vector<std::string>& collectiveNames() const override { return inner_.collectiveNames(); }
    std::vector<OpRecord> ops(size_t device) const override;
    IntervalSet exposed(size_t device) const override { return inner_.exposed(device); }
    std::vector<P2pPartRecord> p2p(size_t device) const override { return inner_.p2p(device); }
    std::vector<AllToAllRecord> alltoall(size_t device) const override { return inner_.alltoall(device); }
    IntervalSet compute(size_t device) const override { return inner_.compute(device); }
    std::vector<BandwidthRecord> bandwidth(size_t device) const override { return inner_.bandwidth(device); }
    std::vector<DeviceIntervals::LeadUp> leadUps(size_t device) const override { return inner_.leadUps(device); }
    LeadUpDetail leadUpDetail(size_t device) const override { return inner_.leadUpDetail(device); }
    std::vector<std::string> warnings() const override { return inner_.warnings(); }
    std::optional<uint64_t> droppedRecords() const override { return inner_.droppedRecords(); }

private:
    const DeviceSource& inner_;
    std::vector<std::vector<uint32_t>> keys_;  // per device and operation, when restricted
    std::string note_;
};

}  // namespace osc::crossrank

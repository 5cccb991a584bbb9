// docs/design.md 4d for one device, once the engine knows where each of its
// operations' waiting ends: algorithm and bus bandwidth per operation, the
// device's medians per collective and size class, its link's peak, and the
// findings that tell a saturated link from an idle one.
#pragma once

#include "analyzer/crossrank/device_cross_rank.h"
#include "analyzer/crossrank/device_source.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::crossrank {

// Where an operation's transfer begins: at its group's (or partners') last
// arrival, or (matched with nothing) at its start, when the basis is its
// duration. `multiHost`: its group spans hosts, so its GPU's link is not
// what limits it.
struct OpArrival {
    TimeNs last = 0;
    BusBwBasis basis = BusBwBasis::Duration;
    bool multiHost = false;
};

struct DeviceBandwidth {
    std::vector<OpBandwidth> ops;  // by operation; empty when none has a bandwidth
    BusBandwidth summary;
    std::vector<Finding> findings;                   // over the device
    std::vector<std::vector<Finding>> stepFindings;  // per step
};

// `ops` and `records` are the device's operations (times on any one
// timeline), their collectives named through `source`'s keys, `arrival`
// where each one's transfer begins. The peak is --peak-busbw-gbps when given,
// else the GPU model's (null when unknown). `sharesGpuWith` names the other
// devices on the same GPU (same UUID): their traffic does not cross the
// GPU's links, and they take turns on its SMs, so the model's peak does not
// apply and a shared-gpu finding says so.
DeviceBandwidth deviceBandwidth(const DeviceSource& source, const std::vector<OpRecord>& ops,
                                const std::vector<BandwidthRecord>& records, const std::vector<OpArrival>& arrival,
                                const std::string& gpu, std::optional<double> peakOption, size_t steps,
                                const std::vector<std::string>& sharesGpuWith = {});

}  // namespace osc::crossrank

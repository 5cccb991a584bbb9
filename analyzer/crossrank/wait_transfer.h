// docs/design.md section 4c for one device: each communication operation
// waits from its start until its group's last rank arrives and moves data
// after that; an operation that waits for no one only moves data.
#pragma once

#include "analyzer/crossrank/device_source.h"

#include <vector>

namespace osc::crossrank {

// One operation split at the moment its group's last rank arrived: it
// waits before, moves data after. Either part may be empty (an operation
// that started last only transfers; one that ended before the last arrival
// only waited).
struct OperationSplit {
    Interval waiting, transfer;
};
OperationSplit splitAtLastArrival(TimeNs start, TimeNs end, TimeNs lastArrival);

struct DeviceWaiting {
    WaitTransferMetrics wait;                // over the whole device
    std::vector<WaitTransferMetrics> steps;  // per step, by position
    IntervalSet exposedWait;                 // (Wt ∖ Tr) ∖ C
};

class WaitTransfer {
public:
    // The operation split at lastArrival (splitAtLastArrival).
    void waitsUntil(TimeNs start, TimeNs end, TimeNs lastArrival);
    void transfers(TimeNs start, TimeNs end);
    // A point-to-point kernel whose partner is unknown (no peer): counted as
    // transfer, and it makes every window it touches unknown.
    void unknownPartner(TimeNs start, TimeNs end);

    // Waiting that is not also transfer elsewhere on the device, and of it
    // the part compute does not hide: waiting lies inside M, so
    // (Wt ∖ Tr) ∖ C = (Wt ∖ Tr) ∩ (M ∖ C). `exposed` and the steps are on
    // the same timeline as the operations.
    DeviceWaiting finish(const IntervalSet& exposed, const DeviceHeader& header, TimeNs stepShift);

private:
    IntervalSetBuilder waiting_, transfer_;
    std::vector<Interval> unknown_;
};

}  // namespace osc::crossrank

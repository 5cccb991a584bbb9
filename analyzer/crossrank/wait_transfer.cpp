#include "analyzer/crossrank/wait_transfer.h"

#include <algorithm>

namespace osc::crossrank {

OperationSplit splitAtLastArrival(TimeNs start, TimeNs end, TimeNs lastArrival) {
    return {{start, std::min(end, lastArrival)}, {std::max(start, lastArrival), end}};
}

void WaitTransfer::waitsUntil(TimeNs start, TimeNs end, TimeNs lastArrival) {
    const OperationSplit split = splitAtLastArrival(start, end, lastArrival);
    waiting_.add(split.waiting.start, split.waiting.end);
    transfer_.add(split.transfer.start, split.transfer.end);
}

void WaitTransfer::transfers(TimeNs start, TimeNs end) { transfer_.add(start, end); }

DeviceWaiting WaitTransfer::finish(const IntervalSet& exposed, const DeviceHeader& header, TimeNs stepShift) {
    DeviceWaiting out;
    const IntervalSet waitOnly = subtract(waiting_.finish(), transfer_.finish());
    out.exposedWait = intersect(waitOnly, exposed);
    out.wait.comm_wait_ns = totalLength(waitOnly);
    out.wait.exposed_wait_ns = totalLength(out.exposedWait);
    out.wait.exposed_transfer_ns = header.totals.exposed_comm_ns - out.wait.exposed_wait_ns;
    out.steps.reserve(header.steps.size());
    for (const auto& s : header.steps) {
        const Interval window{s.start_ns + stepShift, s.end_ns + stepShift};
        WaitTransferMetrics w;
        w.comm_wait_ns = lengthWithin(waitOnly, window);
        w.exposed_wait_ns = lengthWithin(out.exposedWait, window);
        w.exposed_transfer_ns = s.exposed_comm_ns - w.exposed_wait_ns;
        out.steps.push_back(w);
    }
    return out;
}

}  // namespace osc::crossrank

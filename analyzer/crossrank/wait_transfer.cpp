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

void WaitTransfer::unknownPartner(TimeNs start, TimeNs end) {
    transfers(start, end);
    unknown_.push_back({start, end});
}

namespace {

// How many kernels touch a window: overlap it, or (empty) start in it. An
// empty kernel at s counts as [s, s + 1), so a kernel touches [from, to)
// when start < to and end > from; those with end <= from all start before
// `to` too, so the count is #(start < to) - #(end <= from).
class TouchCounter {
public:
    explicit TouchCounter(const std::vector<Interval>& kernels) {
        for (const Interval& k : kernels) {
            starts_.push_back(k.start);
            ends_.push_back(std::max(k.end, k.start + 1));
        }
        std::sort(starts_.begin(), starts_.end());
        std::sort(ends_.begin(), ends_.end());
    }
    int operator()(TimeNs from, TimeNs to) const {
        const auto started = std::lower_bound(starts_.begin(), starts_.end(), to) - starts_.begin();
        const auto ended = std::upper_bound(ends_.begin(), ends_.end(), from) - ends_.begin();
        return static_cast<int>(std::max<std::ptrdiff_t>(0, started - ended));
    }

private:
    std::vector<TimeNs> starts_, ends_;
};

}  // namespace

DeviceWaiting WaitTransfer::finish(const IntervalSet& exposed, const DeviceHeader& header, TimeNs stepShift) {
    DeviceWaiting out;
    const IntervalSet waitOnly = subtract(waiting_.finish(), transfer_.finish());
    out.exposedWait = intersect(waitOnly, exposed);
    out.wait.comm_wait_ns = totalLength(waitOnly);
    out.wait.exposed_wait_ns = totalLength(out.exposedWait);
    out.wait.exposed_transfer_ns = header.totals.exposed_comm_ns - out.wait.exposed_wait_ns;
    out.wait.kernels_without_peer = static_cast<int>(unknown_.size());
    const TouchCounter unknownIn(unknown_);
    out.steps.reserve(header.steps.size());
    for (const auto& s : header.steps) {
        const Interval window{s.start_ns + stepShift, s.end_ns + stepShift};
        WaitTransferMetrics w;
        w.comm_wait_ns = lengthWithin(waitOnly, window);
        w.exposed_wait_ns = lengthWithin(out.exposedWait, window);
        w.exposed_transfer_ns = s.exposed_comm_ns - w.exposed_wait_ns;
        if (!unknown_.empty()) w.kernels_without_peer = unknownIn(window.start, window.end);
        out.steps.push_back(w);
    }
    return out;
}

}  // namespace osc::crossrank

#include "analyzer/metrics/wait_transfer.h"

#include <algorithm>
#include <climits>

namespace osc {
namespace {

TimeNs lowerMedian(std::vector<TimeNs> v) {
    const size_t at = (v.size() - 1) / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(at), v.end());
    return v[at];
}

const CollectiveInstance& opOf(const Analysis& a, std::pair<int, int> instance) {
    return a.devices[static_cast<size_t>(instance.first)].collectives[static_cast<size_t>(instance.second)];
}

}  // namespace

void computeWaitTransfer(Analysis& a, const std::vector<IntervalSet>& exposedOfDevice) {
    const size_t n = a.devices.size();
    if (n < 2) return;
    std::vector<IntervalSetBuilder> waiting(n), transfer(n);
    std::vector<std::vector<char>> grouped(n);
    for (size_t d = 0; d < n; ++d) {
        grouped[d].assign(a.devices[d].collectives.size(), 0);
        a.devices[d].last_arrivals = 0;
        a.devices[d].delay_caused_ns = 0;
    }
    for (const auto& m : a.matched) {
        TimeNs last = INT64_MIN, second = INT64_MIN;
        int lastDevice = -1, atLast = 0;
        for (const auto& inst : m.instances) {
            const TimeNs s = opOf(a, inst).start_ns;
            if (s > last) {
                second = last;
                last = s;
                lastDevice = inst.first;
                atLast = 1;
            } else {
                if (s == last) ++atLast;
                second = std::max(second, s);
            }
        }
        for (const auto& inst : m.instances) {
            const auto& op = opOf(a, inst);
            const auto d = static_cast<size_t>(inst.first);
            grouped[d][static_cast<size_t>(inst.second)] = 1;
            waiting[d].add(op.start_ns, std::min(op.end_ns, last));
            transfer[d].add(std::max(op.start_ns, last), op.end_ns);
        }
        if (atLast == 1 && m.instances.size() >= 2) {
            auto& dev = a.devices[static_cast<size_t>(lastDevice)];
            *dev.last_arrivals += 1;
            *dev.delay_caused_ns += last - second;
        }
    }
    for (size_t d = 0; d < n; ++d) {
        auto& dev = a.devices[d];
        for (size_t i = 0; i < dev.collectives.size(); ++i)
            if (!grouped[d][i]) transfer[d].add(dev.collectives[i].start_ns, dev.collectives[i].end_ns);
        const IntervalSet waitOnly = subtract(waiting[d].finish(), transfer[d].finish());
        const IntervalSet exposedWait =
            d < exposedOfDevice.size() ? intersect(waitOnly, exposedOfDevice[d]) : waitOnly;
        const auto metricsOver = [&](const OverlapMetrics& m, Interval w, bool whole) {
            WaitTransferMetrics out;
            out.comm_wait_ns = whole ? totalLength(waitOnly) : lengthWithin(waitOnly, w);
            out.exposed_wait_ns = whole ? totalLength(exposedWait) : lengthWithin(exposedWait, w);
            out.exposed_transfer_ns = m.exposed_comm_ns - out.exposed_wait_ns;
            return out;
        };
        dev.wait = metricsOver(dev.totals, {}, true);
        dev.exposed_wait_intervals = exposedWait;
        for (auto& s : dev.steps) s.wait = metricsOver(s.metrics, {s.start_ns, s.end_ns}, false);
    }
}

std::vector<TimeNs> collectiveClockShifts(const Analysis& a, size_t processes) {
    std::vector<TimeNs> shifts(processes, 0);
    if (a.devices.empty()) return shifts;
    // The reference: the process holding the lowest rank (ranks unknown: the first).
    int reference = a.devices.front().processIndex, bestRank = INT_MAX;
    for (const auto& d : a.devices)
        if (d.rank >= 0 && d.rank < bestRank) {
            bestRank = d.rank;
            reference = d.processIndex;
        }
    std::vector<std::vector<TimeNs>> differences(processes);
    for (const auto& m : a.matched) {
        const CollectiveInstance* ref = nullptr;
        for (const auto& inst : m.instances)
            if (a.devices[static_cast<size_t>(inst.first)].processIndex == reference) {
                ref = &opOf(a, inst);
                break;
            }
        if (!ref) continue;
        std::vector<char> seen(processes, 0);
        for (const auto& inst : m.instances) {
            const auto p = static_cast<size_t>(a.devices[static_cast<size_t>(inst.first)].processIndex);
            if (static_cast<int>(p) == reference || p >= processes || seen[p]) continue;
            seen[p] = 1;
            differences[p].push_back(ref->end_ns - opOf(a, inst).end_ns);
        }
    }
    for (size_t p = 0; p < processes; ++p)
        if (!differences[p].empty()) shifts[p] = lowerMedian(std::move(differences[p]));
    return shifts;
}

void shiftDeviceTimes(DeviceAnalysis& d, TimeNs by, IntervalSet* exposed) {
    if (by == 0) return;
    for (auto& s : d.steps) {
        s.start_ns += by;
        s.end_ns += by;
    }
    for (auto& c : d.collectives) {
        c.start_ns += by;
        c.end_ns += by;
    }
    for (auto& i : d.exposed_wait_intervals) {
        i.start += by;
        i.end += by;
    }
    if (exposed)
        for (auto& i : *exposed) {
            i.start += by;
            i.end += by;
        }
}

void applyClockShifts(Analysis& a, const std::vector<TimeNs>& shifts,
                      std::vector<IntervalSet>& exposedOfDevice) {
    for (size_t d = 0; d < a.devices.size(); ++d) {
        auto& dev = a.devices[d];
        const auto p = static_cast<size_t>(dev.processIndex);
        const TimeNs by = p < shifts.size() ? shifts[p] : 0;
        dev.clock_shift_ns = by;
        shiftDeviceTimes(dev, by, d < exposedOfDevice.size() ? &exposedOfDevice[d] : nullptr);
    }
}

std::vector<TimeNs> alignOnCollectives(Capture& capture, const AnalysisSettings& settings) {
    AnalysisSettings plain = settings;
    plain.alignCollectives = false;
    const auto shifts = collectiveClockShifts(analyze(capture, plain), capture.processes.size());
    for (size_t p = 0; p < shifts.size(); ++p) capture.shiftProcess(p, shifts[p]);
    return shifts;
}

}  // namespace osc

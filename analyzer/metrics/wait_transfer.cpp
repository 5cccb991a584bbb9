#include "analyzer/metrics/wait_transfer.h"

#include "analyzer/metrics/metric_sum.h"

#include <algorithm>
#include <array>
#include <climits>
#include <tuple>

namespace osc {
namespace {

const CollectiveInstance& opOf(const Analysis& a, std::pair<int, int> instance) {
    return a.devices[static_cast<size_t>(instance.first)].collectives[static_cast<size_t>(instance.second)];
}

// Sends matched with receives (docs/metrics.md section 7d). A kernel waits
// for the partners that arrived while it ran: L = the latest start among it
// and the partners that started before it ended (or as it ended: a transfer
// that takes no time). A partner that started only after it had finished (a
// small send NCCL buffered) kept no one waiting. Kernels already in a group (an all-to-all exchange) are left to it.
// Each linked pair of kernels counts once for last arrivals: the later one,
// when the earlier was still running, delayed it by the difference of starts.
void addPointToPoint(Analysis& a, std::vector<std::vector<char>>& grouped,
                     std::vector<IntervalSetBuilder>& waiting, std::vector<IntervalSetBuilder>& transfer) {
    if (a.p2p.empty()) return;
    const size_t n = a.devices.size();
    std::vector<std::vector<TimeNs>> last(n);
    std::vector<std::array<int, 4>> pairs;
    pairs.reserve(a.p2p.size());
    const auto consider = [&](std::pair<int, int> me, std::pair<int, int> other) {
        const auto d = static_cast<size_t>(me.first), i = static_cast<size_t>(me.second);
        if (grouped[d][i]) return;
        const auto& x = opOf(a, me);
        const auto& y = opOf(a, other);
        if (last[d].empty()) last[d].assign(a.devices[d].collectives.size(), INT64_MIN);
        TimeNs& l = last[d][i];
        if (l == INT64_MIN) l = x.start_ns;
        if (y.start_ns <= x.end_ns) l = std::max(l, y.start_ns);
    };
    for (const auto& t : a.p2p) {
        const bool senderFree = !grouped[static_cast<size_t>(t.sender.first)][static_cast<size_t>(t.sender.second)];
        const bool receiverFree =
            !grouped[static_cast<size_t>(t.receiver.first)][static_cast<size_t>(t.receiver.second)];
        consider(t.sender, t.receiver);
        consider(t.receiver, t.sender);
        if (senderFree && receiverFree) {
            std::array<int, 4> key{t.sender.first, t.sender.second, t.receiver.first, t.receiver.second};
            if (std::tie(key[2], key[3]) < std::tie(key[0], key[1])) key = {key[2], key[3], key[0], key[1]};
            pairs.push_back(key);
        }
    }
    for (size_t d = 0; d < n; ++d)
        for (size_t i = 0; i < last[d].size(); ++i) {
            if (last[d][i] == INT64_MIN) continue;
            const auto& op = a.devices[d].collectives[i];
            grouped[d][i] = 1;
            waiting[d].add(op.start_ns, std::min(op.end_ns, last[d][i]));
            transfer[d].add(std::max(op.start_ns, last[d][i]), op.end_ns);
        }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (const auto& p : pairs) {
        const auto& x = opOf(a, {p[0], p[1]});
        const auto& y = opOf(a, {p[2], p[3]});
        if (x.start_ns == y.start_ns) continue;
        const bool yLate = y.start_ns > x.start_ns;
        const auto& early = yLate ? x : y;
        const auto& late = yLate ? y : x;
        if (late.start_ns > early.end_ns) continue;
        auto& dev = a.devices[static_cast<size_t>(yLate ? p[2] : p[0])];
        *dev.last_arrivals += 1;
        *dev.delay_caused_ns += late.start_ns - early.start_ns;
    }
}

}  // namespace

void computeWaitTransfer(Analysis& a, const std::vector<DeviceIntervals>& intervalsOfDevice) {
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
    addPointToPoint(a, grouped, waiting, transfer);
    for (size_t d = 0; d < n; ++d) {
        auto& dev = a.devices[d];
        for (size_t i = 0; i < dev.collectives.size(); ++i)
            if (!grouped[d][i]) transfer[d].add(dev.collectives[i].start_ns, dev.collectives[i].end_ns);
        const IntervalSet waitOnly = subtract(waiting[d].finish(), transfer[d].finish());
        const IntervalSet exposedWait =
            d < intervalsOfDevice.size() ? intersect(waitOnly, intervalsOfDevice[d].exposed) : waitOnly;
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
        // Grouped sends and receives do not end together the way a collective does.
        if (m.pointToPoint) continue;
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

void shiftDeviceTimes(DeviceAnalysis& d, TimeNs by, DeviceIntervals* intervals) {
    if (by == 0) return;
    const auto move = [by](IntervalSet& set) {
        for (auto& i : set) {
            i.start += by;
            i.end += by;
        }
    };
    for (auto& s : d.steps) {
        s.start_ns += by;
        s.end_ns += by;
    }
    for (auto& c : d.collectives) {
        c.start_ns += by;
        c.end_ns += by;
    }
    move(d.exposed_wait_intervals);
    if (intervals) {
        move(intervals->exposed);
        move(intervals->compute);
        for (auto& mb : intervals->microbatches) {
            mb.compute.start += by;
            mb.compute.end += by;
        }
    }
}

void applyClockShifts(Analysis& a, const std::vector<TimeNs>& shifts,
                      std::vector<DeviceIntervals>& intervalsOfDevice) {
    for (size_t d = 0; d < a.devices.size(); ++d) {
        auto& dev = a.devices[d];
        const auto p = static_cast<size_t>(dev.processIndex);
        const TimeNs by = p < shifts.size() ? shifts[p] : 0;
        dev.clock_shift_ns = by;
        shiftDeviceTimes(dev, by, d < intervalsOfDevice.size() ? &intervalsOfDevice[d] : nullptr);
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

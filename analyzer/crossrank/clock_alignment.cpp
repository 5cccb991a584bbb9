#include "analyzer/crossrank/clock_alignment.h"

#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/metric_sum.h"

#include <climits>

namespace osc::crossrank {

std::vector<TimeNs> collectiveClockShifts(const DeviceSource& source, const std::vector<char>& matchedKey) {
    const size_t n = source.deviceCount();
    std::vector<TimeNs> shifts(source.processCount(), 0);
    if (n == 0) return shifts;
    int reference = source.processOf(0), bestRank = INT_MAX;
    for (size_t i = 0; i < n; ++i) {
        const int rank = source.header(i).rank;
        if (rank >= 0 && rank < bestRank) {
            bestRank = rank;
            reference = source.processOf(i);
        }
    }
    // Each device counts once per key, with its first operation of it (the
    // group's instance); each process once, with its first device's.
    const size_t keys = matchedKey.size();
    std::vector<TimeNs> refEnd(keys, 0);
    std::vector<char> haveRef(keys, 0);
    std::vector<uint32_t> deviceStamp(keys, 0), processStamp(keys, 0);
    const auto instances = [&](size_t i, auto&& each) {
        const auto stamp = static_cast<uint32_t>(i + 1);
        const TimeNs origin = source.originShift(i);
        for (const auto& op : source.ops(i)) {
            if (op.key == kNoKey || !matchedKey[op.key] || deviceStamp[op.key] == stamp) continue;
            deviceStamp[op.key] = stamp;
            each(op.key, op.end_ns + origin);
        }
    };
    for (size_t i = 0; i < n; ++i)
        if (source.processOf(i) == reference)
            instances(i, [&](uint32_t key, TimeNs end) {
                if (haveRef[key]) return;
                haveRef[key] = 1;
                refEnd[key] = end;
            });
    // Devices of a process are adjacent in job order.
    std::vector<TimeNs> differences;
    for (size_t i = 0; i < n; ++i) {
        const int p = source.processOf(i);
        if (p == reference) continue;
        const auto pStamp = static_cast<uint32_t>(p + 1);
        instances(i, [&](uint32_t key, TimeNs end) {
            if (!haveRef[key] || processStamp[key] == pStamp) return;
            processStamp[key] = pStamp;
            differences.push_back(refEnd[key] - end);
        });
        if (i + 1 == n || source.processOf(i + 1) != p) {
            if (!differences.empty()) shifts[static_cast<size_t>(p)] = lowerMedian(std::move(differences));
            differences.clear();
        }
    }
    return shifts;
}

std::vector<TimeNs> alignOnCollectives(Capture& capture, const AnalysisSettings& settings) {
    AnalysisSettings aligned = settings;
    aligned.alignCollectives = true;
    const Analysis a = analyze(capture, aligned);
    std::vector<TimeNs> shifts(capture.processes.size(), 0);
    for (const auto& d : a.devices)
        if (static_cast<size_t>(d.processIndex) < shifts.size())
            shifts[static_cast<size_t>(d.processIndex)] = d.clock_shift_ns.value_or(0);
    for (size_t p = 0; p < shifts.size(); ++p) capture.shiftProcess(p, shifts[p]);
    return shifts;
}

}  // namespace osc::crossrank

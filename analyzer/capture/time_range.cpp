#include "analyzer/capture/time_range.h"

#include "analyzer/capture/capture_error.h"

#include <cstdint>
#include <vector>

namespace osc {
namespace {

void checkColumn(const std::vector<TimeNs>& column, const char* table, const std::string& path) {
    // Every time of a capture passes here: a branch-free sweep first (the
    // compiler vectorises it), the row looked for only when one is out.
    uint64_t out = 0;
    for (const TimeNs t : column) out |= static_cast<uint64_t>(!timeInRange(t));
    if (out == 0) return;
    for (size_t i = 0; i < column.size(); ++i)
        if (!timeInRange(column[i]))
            throw CaptureError(path, std::string(table) + " " + std::to_string(i + 1) + ": time " +
                                         std::to_string(column[i]) +
                                         " ns is impossible (times must lie within +-2^62 ns)");
}

}  // namespace

void checkTimeRange(const Process& p, const std::string& path) {
    if (!timeInRange(p.sessionStartUtcNs))
        throw CaptureError(path, "session start " + std::to_string(p.sessionStartUtcNs) +
                                     " ns is impossible (times must lie within +-2^62 ns)");
    for (const auto& d : p.devices) {
        for (const auto* c : {&d.kernels.start, &d.kernels.end}) checkColumn(*c, "kernel", path);
        for (const auto* c : {&d.copies.start, &d.copies.end}) checkColumn(*c, "memory copy", path);
        for (const auto* c : {&d.memsets.start, &d.memsets.end}) checkColumn(*c, "memset", path);
        for (const auto* c : {&d.syncs.start, &d.syncs.end}) checkColumn(*c, "synchronization", path);
    }
    for (const auto* c : {&p.apiCalls.start, &p.apiCalls.end}) checkColumn(*c, "API call", path);
    for (const auto* c : {&p.ranges.start, &p.ranges.end}) checkColumn(*c, "range", path);
    for (const auto* c : {&p.cpuOps.start, &p.cpuOps.end}) checkColumn(*c, "CPU operator", path);
    for (const auto* c : {&p.collectives.enqueue, &p.collectives.gpuStart, &p.collectives.gpuEnd})
        checkColumn(*c, "collective", path);
}

void checkTimeRanges(const Capture& capture, size_t firstProcess, const std::string& path) {
    for (size_t i = firstProcess; i < capture.processes.size(); ++i) checkTimeRange(capture.processes[i], path);
}

void finishLoading(Capture& capture) {
    std::vector<TimeNs> offsets;
    offsets.reserve(capture.processes.size());
    for (const auto& p : capture.processes) offsets.push_back(p.timeOffsetNs);
    capture.alignProcesses();
    // Only a process the alignment moved can have left the range (every
    // time of a capture, swept again, was 1 % of a large trace's report).
    for (size_t i = 0; i < capture.processes.size(); ++i)
        if (capture.processes[i].timeOffsetNs != offsets[i])
            checkTimeRange(capture.processes[i], capture.processes[i].sourcePath);
    capture.finalize();
}

}  // namespace osc

#include "analyzer/hang/host_activity.h"

#include <algorithm>

namespace osc::hang {
namespace {

// The row that started last (ties: the one that ended last), as an item;
// `lastEnd` takes every row's end: an outer range that ends after the newest
// inner one still says the host was alive then.
std::optional<HostItem> newest(const Capture& capture, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                               const std::vector<uint32_t>& name, const std::vector<RangeKind>* kind,
                               std::optional<TimeNs>& lastEnd) {
    std::optional<size_t> best;
    for (size_t i = 0; i < start.size(); ++i) {
        if (kind && (*kind)[i] == RangeKind::Mark) continue;
        const TimeNs seen = std::max(start[i], end[i]);  // a range still open when the file closed has no end
        lastEnd = std::max(lastEnd.value_or(seen), seen);
        if (!best || std::pair(start[i], end[i]) > std::pair(start[*best], end[*best])) best = i;
    }
    if (!best) return std::nullopt;
    return HostItem{std::string(capture.strings.at(name[*best])), start[*best], end[*best]};
}

}  // namespace

HostActivity hostActivityOf(const Capture& capture, const Process& p) {
    HostActivity h;
    h.apiCall = newest(capture, p.apiCalls.start, p.apiCalls.end, p.apiCalls.name, nullptr, h.lastSeenNs);
    // GPU-side annotations (Kineto's gpu_user_annotation) are not the host,
    // and NCCL's own ranges only repeat the last collective call.
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> name;
    std::vector<RangeKind> kind;
    for (size_t i = 0; i < p.ranges.size(); ++i) {
        if (i < p.ranges.onGpu.size() && p.ranges.onGpu[i]) continue;
        if (p.ranges.domain[i] != kNoId && capture.strings.at(p.ranges.domain[i]) == "NCCL") continue;
        start.push_back(p.ranges.start[i]);
        end.push_back(p.ranges.end[i]);
        name.push_back(p.ranges.name[i]);
        kind.push_back(p.ranges.kind[i]);
    }
    h.range = newest(capture, start, end, name, &kind, h.lastSeenNs);
    h.cpuOp = newest(capture, p.cpuOps.start, p.cpuOps.end, p.cpuOps.name, nullptr, h.lastSeenNs);
    return h;
}

}  // namespace osc::hang

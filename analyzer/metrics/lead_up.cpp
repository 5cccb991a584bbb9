#include "analyzer/metrics/lead_up.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace osc {
namespace {

struct HostRange {
    TimeNs start, end;
    uint32_t name;  // capture string id; kNoId: unnamed
};

// A stretch of host time and the range that ran then (the latest started).
struct HostSegment {
    TimeNs start, end;
    uint32_t name;
};

// The host ranges as disjoint segments, each named by the range covering it
// that started last: a sweep over starts and ends with the covering ranges
// ordered latest start first, then shortest, then by name (by text, so that
// every reader of the same trace agrees whatever ids it gave the names).
std::vector<HostSegment> hostSegments(std::vector<HostRange> ranges, const StringTable& strings) {
    std::vector<HostSegment> out;
    if (ranges.empty()) return out;
    std::sort(ranges.begin(), ranges.end(), [](const HostRange& a, const HostRange& b) { return a.start < b.start; });
    const auto text = [&](uint32_t id) { return id == kNoId ? std::string_view() : strings.at(id); };
    const auto innerFirst = [&](size_t a, size_t b) {
        const HostRange &x = ranges[a], &y = ranges[b];
        if (x.start != y.start) return x.start > y.start;
        if (x.end != y.end) return x.end < y.end;
        if (x.name != y.name) {
            const auto tx = text(x.name), ty = text(y.name);
            if (tx != ty) return tx < ty;
        }
        return a < b;
    };
    std::set<size_t, decltype(innerFirst)> active(innerFirst);
    std::vector<size_t> byEnd(ranges.size());
    for (size_t i = 0; i < byEnd.size(); ++i) byEnd[i] = i;
    std::sort(byEnd.begin(), byEnd.end(), [&](size_t a, size_t b) { return ranges[a].end < ranges[b].end; });
    size_t s = 0, e = 0;
    while (s < ranges.size() || e < byEnd.size()) {
        const TimeNs t = s < ranges.size() ? std::min(ranges[s].start, ranges[byEnd[e]].end) : ranges[byEnd[e]].end;
        while (e < byEnd.size() && ranges[byEnd[e]].end == t) active.erase(byEnd[e++]);
        while (s < ranges.size() && ranges[s].start == t) active.insert(s++);
        if (active.empty()) continue;
        const TimeNs next = s < ranges.size() ? std::min(ranges[s].start, ranges[byEnd[e]].end) : ranges[byEnd[e]].end;
        const uint32_t name = ranges[*active.begin()].name;
        if (!out.empty() && out.back().end == t && out.back().name == name)
            out.back().end = next;
        else
            out.push_back({t, next, name});
    }
    return out;
}

// The process's host activity that overlaps `idle` (sorted, disjoint): only
// that can ever name idle time, and it is far less than all of it.
std::vector<HostRange> hostRangesOver(const Process& process, const std::vector<int8_t>& stepNameMatches,
                                      const IntervalSet& idle) {
    std::vector<HostRange> out;
    const auto overlapsIdle = [&](TimeNs start, TimeNs end) {
        if (end <= start) return false;
        const auto it =
            std::upper_bound(idle.begin(), idle.end(), start, [](TimeNs t, const Interval& i) { return t < i.end; });
        return it != idle.end() && it->start < end;
    };
    const auto& api = process.apiCalls;
    for (size_t i = 0; i < api.size(); ++i)
        if (overlapsIdle(api.start[i], api.end[i])) out.push_back({api.start[i], api.end[i], api.name[i]});
    const auto& ops = process.cpuOps;
    for (size_t i = 0; i < ops.size(); ++i)
        if (overlapsIdle(ops.start[i], ops.end[i])) out.push_back({ops.start[i], ops.end[i], ops.name[i]});
    const auto& r = process.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
        if (i < r.onGpu.size() && r.onGpu[i]) continue;
        const uint32_t id = r.name[i];
        if (id != kNoId && id < stepNameMatches.size() && stepNameMatches[id] == 1) continue;
        if (overlapsIdle(r.start[i], r.end[i])) out.push_back({r.start[i], r.end[i], id});
    }
    return out;
}

// [window) ∖ busy.
IntervalSet idleWithin(const CoverageIndex& busy, Interval window) {
    IntervalSet out;
    TimeNs at = window.start;
    const IntervalSet& b = busy.intervals();
    for (size_t i = busy.firstEndingAfter(window.start); i < b.size() && b[i].start < window.end; ++i) {
        if (b[i].start > at) out.push_back({at, b[i].start});
        at = std::max(at, b[i].end);
    }
    if (at < window.end) out.push_back({at, window.end});
    return out;
}

// One contribution to an operation's increments, before they are merged.
struct Piece {
    uint32_t op;  // position among the step's operations
    uint32_t name;
    uint8_t host;
    TimeNs ns;
};

}  // namespace

TimeNs leadUpStart(const DeviceCoverage& coverage, TimeNs windowStart) {
    const IntervalSet& b = coverage.busy.intervals();
    const size_t i = coverage.busy.firstEndingAfter(windowStart);
    if (i >= b.size() || b[i].start < windowStart || i == 0) return windowStart;
    return b[i - 1].end;
}

void computeLeadUps(const Capture& capture, const Process& process, const Device& device,
                    ActivityClassifier& classifier, const DeviceCoverage& cov, const std::vector<StepAnalysis>& steps,
                    const std::vector<CollectiveInstance>& ops, const std::vector<int8_t>& stepNameMatches,
                    DeviceIntervals& out) {
    std::vector<std::vector<uint32_t>> opsOfStep(steps.size());
    bool any = false;
    for (size_t i = 0; i < ops.size(); ++i)
        if (ops[i].step >= 0 && static_cast<size_t>(ops[i].step) < steps.size()) {
            opsOfStep[static_cast<size_t>(ops[i].step)].push_back(static_cast<uint32_t>(i));
            any = true;
        }
    if (!any) return;

    // Compute kernels in start order, with the latest end so far: the first
    // that can reach into a window is found by binary search.
    const KernelTable& k = device.kernels;
    std::vector<uint32_t> compute;
    for (size_t i = 0; i < k.size(); ++i)
        if (k.end[i] > k.start[i] && classifier.kernel(kernelNameId(k, i)) == Category::Compute)
            compute.push_back(static_cast<uint32_t>(i));
    std::stable_sort(compute.begin(), compute.end(), [&](uint32_t a, uint32_t b) { return k.start[a] < k.start[b]; });
    std::vector<TimeNs> reach(compute.size());
    for (size_t i = 0; i < compute.size(); ++i) reach[i] = std::max(i ? reach[i - 1] : INT64_MIN, k.end[compute[i]]);

    // Per step its lead-up window, and the idle time inside any of them.
    std::vector<TimeNs> from(steps.size());
    IntervalSetBuilder idleAll;
    for (size_t s = 0; s < steps.size(); ++s) {
        if (opsOfStep[s].empty()) continue;
        from[s] = leadUpStart(cov, steps[s].start_ns);
        const TimeNs last = ops[opsOfStep[s].back()].start_ns;
        for (const auto& i : idleWithin(cov.busy, {from[s], last})) idleAll.add(i);
    }
    const IntervalSet idle = idleAll.finish();
    const std::vector<HostSegment> host = hostSegments(hostRangesOver(process, stepNameMatches, idle), capture.strings);

    std::unordered_map<uint32_t, uint32_t> localKernel, localHost;
    const auto local = [&](std::unordered_map<uint32_t, uint32_t>& map, uint32_t id) {
        const auto [it, added] = map.emplace(id, static_cast<uint32_t>(out.leadUpNames.size()));
        if (added) out.leadUpNames.emplace_back(id == kNoId ? std::string_view() : capture.strings.at(id));
        return it->second;
    };

    std::vector<Piece> pieces;
    for (size_t s = 0; s < steps.size(); ++s) {
        const auto& mine = opsOfStep[s];
        if (mine.empty()) continue;
        const TimeNs r = from[s];
        std::vector<TimeNs> arrival(mine.size());
        for (size_t j = 0; j < mine.size(); ++j) arrival[j] = std::max(r, ops[mine[j]].start_ns);
        // The operation whose increment holds time t: the first arriving after t.
        const auto opAfter = [&](TimeNs t) {
            return static_cast<uint32_t>(std::upper_bound(arrival.begin(), arrival.end(), t) - arrival.begin());
        };
        const auto spread = [&](TimeNs a, TimeNs b, uint32_t name, uint8_t isHost) {
            a = std::max(a, r);
            for (uint32_t j = opAfter(a); j < arrival.size() && a < b; ++j) {
                const TimeNs until = std::min(b, arrival[j]);
                if (until > a) pieces.push_back({j, name, isHost, until - a});
                a = std::max(a, arrival[j]);
            }
        };
        pieces.clear();
        const TimeNs last = arrival.back();
        for (size_t c = static_cast<size_t>(std::upper_bound(reach.begin(), reach.end(), r) - reach.begin());
             c < compute.size() && k.start[compute[c]] < last; ++c) {
            const uint32_t i = compute[c];
            if (k.end[i] > r) spread(k.start[i], k.end[i], local(localKernel, kernelNameId(k, i)), 0);
        }
        for (const Interval& gap : clip(idle, {r, last})) {
            TimeNs at = gap.start;
            auto seg = std::upper_bound(host.begin(), host.end(), at,
                                        [](TimeNs t, const HostSegment& h) { return t < h.end; });
            for (; at < gap.end; ++seg) {
                if (seg == host.end() || seg->start >= gap.end) {
                    spread(at, gap.end, local(localHost, kNoId), 1);
                    break;
                }
                if (seg->start > at) spread(at, seg->start, local(localHost, kNoId), 1);
                const TimeNs until = std::min(gap.end, seg->end);
                spread(std::max(at, seg->start), until, local(localHost, seg->name), 1);
                at = until;
            }
        }
        std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
            return std::tie(a.op, a.host, a.name) < std::tie(b.op, b.host, b.name);
        });
        size_t p = 0;
        for (uint32_t j = 0; j < mine.size(); ++j) {
            DeviceIntervals::LeadUp lead;
            lead.op = mine[j];
            lead.step = static_cast<int32_t>(s);
            lead.from_ns = r;
            const TimeNs a = arrival[j];
            lead.compute_ns = cov.compute.covered(r, a);
            lead.idle_ns = (a - r) - cov.busy.covered(r, a);
            const size_t before = out.leadUpIncrements.size();
            for (; p < pieces.size() && pieces[p].op == j; ++p) {
                auto& incs = out.leadUpIncrements;
                if (incs.size() > before && incs.back().name == pieces[p].name && incs.back().host == pieces[p].host)
                    incs.back().ns += pieces[p].ns;
                else
                    incs.push_back({pieces[p].name, pieces[p].host, pieces[p].ns});
            }
            lead.increments = static_cast<uint32_t>(out.leadUpIncrements.size() - before);
            out.leadUps.push_back(lead);
        }
    }
    // Operations in step order above; the engine reads them by operation.
    // (Each step's operations stay in their order, so increments still
    // follow their operation: sort the records with their increments.)
    std::vector<size_t> order(out.leadUps.size()), firstInc(out.leadUps.size());
    size_t at = 0;
    for (size_t i = 0; i < out.leadUps.size(); ++i) {
        order[i] = i;
        firstInc[i] = at;
        at += out.leadUps[i].increments;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return out.leadUps[a].op < out.leadUps[b].op; });
    std::vector<DeviceIntervals::LeadUp> leads;
    std::vector<DeviceIntervals::LeadUpIncrement> incs;
    leads.reserve(order.size());
    incs.reserve(out.leadUpIncrements.size());
    for (size_t i : order) {
        leads.push_back(out.leadUps[i]);
        incs.insert(
            incs.end(), out.leadUpIncrements.begin() + static_cast<std::ptrdiff_t>(firstInc[i]),
            out.leadUpIncrements.begin() + static_cast<std::ptrdiff_t>(firstInc[i] + out.leadUps[i].increments));
    }
    out.leadUps = std::move(leads);
    out.leadUpIncrements = std::move(incs);
}

}  // namespace osc

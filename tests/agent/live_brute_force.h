// Per-step overlap figures the slow, obvious way, for checking the live
// metrics (agent/live) against rows: a step's GPU work is what the API calls
// inside its range launched, its window spans that work, and every time in
// the window is looked at segment by segment between all interval ends.
// Shares nothing with the analyzer but the rows' struct types.
#pragma once

#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/model.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace osc::agent::test {

struct BruteRows {
    struct Gpu {
        int64_t start, end;
        uint32_t device, correlation;
        bool comm;
    };
    struct Call {
        int64_t start;
        uint32_t correlation;
    };
    struct Step {
        int64_t number, start, end;
    };
    struct Plugin {
        uint32_t device;
        int64_t gpuStart, gpuEnd;
        uint64_t bytes;
        int ranks;
    };
    std::vector<Gpu> gpu;
    std::vector<Call> calls;
    std::vector<Step> steps;
    std::vector<Plugin> plugin;
};

struct BruteStep {
    int64_t window = 0, compute = 0, comm = 0, overlap = 0, exposed = 0, idle = 0;
    int64_t wait = -1;  // with two or more devices
    uint64_t bytes = 0;
    double busBytes = 0;
    int64_t transfer = 0;
};

// Length of the part of [a, b) covered by at least one of `set`, and the
// same for `both` where two sets must cover it; by elementary segments.
inline BruteStep bruteStep(const BruteRows& rows, const BruteRows::Step& step, uint32_t device) {
    BruteStep out;
    std::set<uint32_t> launched;
    for (const auto& c : rows.calls)
        if (c.start >= step.start && c.start < step.end) launched.insert(c.correlation);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& g : rows.gpu)
        if (g.device == device && launched.count(g.correlation) && g.end > g.start) {
            lo = std::min(lo, g.start);
            hi = std::max(hi, g.end);
        }
    if (lo >= hi) return out;
    out.window = hi - lo;
    std::vector<int64_t> cuts = {lo, hi};
    for (const auto& g : rows.gpu)
        if (g.device == device)
            for (int64_t t : {g.start, g.end})
                if (t > lo && t < hi) cuts.push_back(t);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    // Waiting for the last device: the k-th communication kernel the step
    // launched on each device is one operation.
    std::map<uint32_t, std::vector<const BruteRows::Gpu*>> opsByDevice;
    for (const auto& g : rows.gpu)
        if (g.comm && launched.count(g.correlation)) opsByDevice[g.device].push_back(&g);
    for (auto& [d, ops] : opsByDevice)
        std::sort(ops.begin(), ops.end(), [](auto* a, auto* b) { return a->start < b->start; });
    const auto& mine = opsByDevice[device];
    std::vector<std::pair<int64_t, int64_t>> waits, transfers;
    for (size_t k = 0; k < mine.size(); ++k) {
        int64_t last = mine[k]->start;
        for (const auto& [d, ops] : opsByDevice)
            if (k < ops.size()) last = std::max(last, ops[k]->start);
        const int64_t split = std::clamp(last, mine[k]->start, mine[k]->end);
        waits.push_back({mine[k]->start, split});
        transfers.push_back({split, mine[k]->end});
        // Its NCCL row: the nearest on the device (the plugin's clock is not
        // CUPTI's; the agent's rows are off by the two clocks' read apart).
        const BruteRows::Plugin* row = nullptr;
        for (const auto& p : rows.plugin)
            if (p.device == device && std::llabs(p.gpuStart - mine[k]->start) < 1'000'000 &&
                (!row || std::llabs(p.gpuStart - mine[k]->start) < std::llabs(row->gpuStart - mine[k]->start)))
                row = &p;
        if (row) {
            out.bytes += row->bytes;
            out.busBytes += double(row->bytes) * (row->ranks > 1 ? 2.0 * (row->ranks - 1) / row->ranks : 1.0);
            out.transfer += mine[k]->end - split;
        }
    }
    for (const auto& w : waits)
        for (int64_t t : {w.first, w.second})
            if (t > lo && t < hi) cuts.push_back(t);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    int64_t wait = 0;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
        const int64_t a = cuts[i], b = cuts[i + 1];
        bool c = false, m = false;
        for (const auto& g : rows.gpu)
            if (g.device == device && g.start <= a && g.end >= b) (g.comm ? m : c) = true;
        if (c) out.compute += b - a;
        if (m) out.comm += b - a;
        if (c && m) out.overlap += b - a;
        if (!c && !m) out.idle += b - a;
        const auto inside = [&](const std::vector<std::pair<int64_t, int64_t>>& set) {
            for (const auto& [s, e] : set)
                if (s <= a && e >= b && e > s) return true;
            return false;
        };
        if (inside(waits) && !inside(transfers)) wait += b - a;
    }
    out.exposed = out.comm - out.overlap;
    if (opsByDevice.size() >= 2) out.wait = wait;
    return out;
}

// The last run of digits in a name: a step's number.
inline int64_t lastNumberIn(std::string_view name) {
    size_t end = name.find_last_of("0123456789");
    if (end == std::string_view::npos) return -1;
    size_t begin = name.find_last_not_of("0123456789", end);
    begin = begin == std::string_view::npos ? 0 : begin + 1;
    return std::stoll(std::string(name.substr(begin, end + 1 - begin)));
}

// BruteRows of a capture file read back.
inline BruteRows bruteRowsOf(const Capture& cap) {
    BruteRows b;
    const Process& p = cap.processes.at(0);
    for (const Device& d : p.devices) {
        for (size_t i = 0; i < d.kernels.size(); ++i) {
            const std::string_view name = cap.strings.at(d.kernels.name[i]);
            b.gpu.push_back(
                {d.kernels.start[i], d.kernels.end[i], d.id, d.kernels.correlation[i], name.rfind("nccl", 0) == 0});
        }
    }
    for (size_t i = 0; i < p.apiCalls.size(); ++i) b.calls.push_back({p.apiCalls.start[i], p.apiCalls.correlation[i]});
    for (size_t i = 0; i < p.ranges.size(); ++i) {
        const std::string_view name = cap.strings.at(p.ranges.name[i]);
        if (name.rfind("ProfilerStep#", 0) == 0)
            b.steps.push_back({lastNumberIn(name), p.ranges.start[i], p.ranges.end[i]});
    }
    const CollectiveTable& c = p.collectives;
    for (size_t i = 0; i < c.size(); ++i)
        b.plugin.push_back({c.device[i], c.gpuStart[i], c.gpuEnd[i], c.bytes[i], c.nranks[i]});
    return b;
}

}  // namespace osc::agent::test

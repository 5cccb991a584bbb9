#include "gui/model/host_lanes.h"

#include "analyzer/capture/printable_text.h"

#include <algorithm>
#include <map>

namespace osc::gui {
namespace {

struct HostEvent {
    TimeNs start, end;
    uint32_t ref;
    EventSource source;
};

// "1 call", "3 calls".
std::string count(size_t n, const char* singular) { return std::to_string(n) + " " + singular + (n == 1 ? "" : "s"); }

}  // namespace

std::string hostThreadTitle(const Process& p, uint64_t globalTid) {
    const std::string tid = std::to_string(threadIdOf(globalTid));
    const auto it = p.threadNames.find(globalTid);
    if (it == p.threadNames.end() || it->second.empty()) return "CPU " + tid;
    // A name from a file: no control bytes, and short enough for a lane title.
    return printableLine(it->second, 80) + " · tid " + tid;
}

std::vector<HostThreadLane> buildHostLanes(const Process& p) {
    std::map<uint64_t, std::vector<HostEvent>> byThread;
    const ApiCallTable& api = p.apiCalls;
    const CpuOpTable& ops = p.cpuOps;
    // Both tables are start-sorted: a merge keeps each thread's list sorted.
    // At equal starts the operator comes first, so the call lands under it.
    size_t a = 0, o = 0;
    while (a < api.size() || o < ops.size()) {
        const bool takeOp = o < ops.size() && (a >= api.size() || ops.start[o] <= api.start[a]);
        if (takeOp) {
            byThread[ops.globalTid[o]].push_back(
                {ops.start[o], std::max(ops.start[o], ops.end[o]), static_cast<uint32_t>(o), EventSource::CpuOp});
            ++o;
        } else {
            byThread[api.globalTid[a]].push_back(
                {api.start[a], std::max(api.start[a], api.end[a]), static_cast<uint32_t>(a), EventSource::ApiCall});
            ++a;
        }
    }
    std::vector<HostThreadLane> out;
    for (auto& [tid, events] : byThread) {
        HostThreadLane lane;
        lane.globalTid = tid;
        lane.events = events.size();
        // Depth by a stack of open ends: an event goes one row below the
        // innermost one still running at its start.
        std::vector<TimeNs> open;
        size_t calls = 0, opCount = 0;
        for (const HostEvent& e : events) {
            while (!open.empty() && open.back() <= e.start) open.pop_back();
            const size_t depth = std::min<size_t>(open.size(), kMaxHostDepth - 1);
            if (depth >= lane.rows.size()) lane.rows.resize(depth + 1);
            lane.rows[depth].add(e.start, e.end, e.ref, 0, e.source);
            if (open.size() < kMaxHostDepth) open.push_back(e.end);
            (e.source == EventSource::ApiCall ? calls : opCount) += 1;
        }
        for (auto& row : lane.rows) row.finish();
        lane.label = hostThreadTitle(p, tid) + ": ";
        if (opCount) lane.label += count(opCount, "op") + (calls ? ", " : "");
        if (calls) lane.label += count(calls, "call");
        out.push_back(std::move(lane));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const HostThreadLane& x, const HostThreadLane& y) { return x.events > y.events; });
    return out;
}

}  // namespace osc::gui

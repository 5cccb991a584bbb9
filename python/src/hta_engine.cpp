// HTA's five computations (hta_engine.h) over the events hta_trace.cpp kept.
#include "python/src/hta_engine.h"
#include "python/src/columns.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace osc::python {
namespace {

struct Span {
    TimeNs start, end;
};

// hta/utils/utils.py merge_kernel_intervals: sorted by start, a new group
// wherever a start lies beyond every earlier end; a group spans its first
// start to its largest end. Negative-length events (inward rounding) stay
// as HTA keeps them. Where starts tie, HTA's unstable sort decides whether
// a negative event opens a group of its own; here the longest goes first,
// so it never does (docs/python.md).
std::vector<Span> htaMerge(std::vector<Span> spans) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); });
    std::vector<Span> groups;
    TimeNs reach = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
        if (i == 0 || spans[i].start > reach) {
            groups.push_back(spans[i]);
        } else {
            groups.back().end = std::max(groups.back().end, spans[i].end);
        }
        reach = i == 0 ? spans[i].end : std::max(reach, spans[i].end);
    }
    return groups;
}

TimeNs runLength(const std::vector<Span>& groups) {
    TimeNs sum = 0;
    for (const auto& g : groups) sum += g.end - g.start;
    return sum;
}

struct StatusEvent {
    TimeNs time;
    int delta;
};

// HTA's sweeps: +value at each merged group's start, -value at its end,
// sorted by time, with a running sum; each row lasts until the next row.
std::vector<StatusEvent> statusEvents(const std::vector<std::pair<std::vector<Span>, int>>& typed) {
    std::vector<StatusEvent> events;
    for (const auto& [groups, value] : typed)
        for (const auto& g : groups) {
            events.push_back({g.start, value});
            events.push_back({g.end, -value});
        }
    std::stable_sort(events.begin(), events.end(),
                     [](const StatusEvent& a, const StatusEvent& b) { return a.time < b.time; });
    return events;
}

}  // namespace

const char* htaKernelTypeName(HtaKernelType t) {
    switch (t) {
        case HtaKernelType::Communication:
            return "COMMUNICATION";
        case HtaKernelType::Memory:
            return "MEMORY";
        case HtaKernelType::Computation:
            return "COMPUTATION";
        case HtaKernelType::Other:
            return "OTHER";
    }
    return "OTHER";
}

namespace {

double us(TimeNs ns) { return static_cast<double>(ns) / 1000.0; }

std::vector<Span> spansOf(const HtaRank& r, const std::function<bool(size_t)>& keep) {
    std::vector<Span> spans;
    for (size_t i = 0; i < r.start.size(); ++i)
        if (keep(i)) spans.push_back({r.start[i], r.end[i]});
    return spans;
}

}  // namespace

py::dict HtaTrace::overlap() const {
    std::vector<TimeNs> overlapped, comm;
    for (const auto& r : ranks_) {
        const auto commGroups =
            htaMerge(spansOf(r, [&](size_t i) { return r.type[i] == HtaKernelType::Communication; }));
        const auto compGroups = htaMerge(spansOf(r, [&](size_t i) { return r.type[i] == HtaKernelType::Computation; }));
        const auto events = statusEvents({{commGroups, 1}, {compGroups, 2}});
        TimeNs both = 0;
        int running = 0;
        for (size_t k = 0; k + 1 < events.size(); ++k) {
            running += events[k].delta;
            if (running == 3) both += events[k + 1].time - events[k].time;
        }
        overlapped.push_back(both);
        comm.push_back(runLength(commGroups));
    }
    Columns t(ranks_.size());
    t.add("rank", [&](size_t i) { return ranks_[i].rank; });
    t.add("overlap_ns", [&](size_t i) { return overlapped[i]; });
    t.add("comm_ns", [&](size_t i) { return comm[i]; });
    return t.finish();
}

py::dict HtaTrace::temporal() const {
    struct Row {
        std::optional<TimeNs> idle, compute, span;
    };
    std::vector<Row> rows;
    for (const auto& r : ranks_) {
        const auto all = htaMerge(spansOf(r, [](size_t) { return true; }));
        if (all.empty()) {
            rows.push_back({});
            continue;
        }
        const TimeNs span = all.back().end - all.front().start;
        const auto compute =
            runLength(htaMerge(spansOf(r, [&](size_t i) { return r.type[i] == HtaKernelType::Computation; })));
        rows.push_back({span - runLength(all), compute, span});
    }
    Columns t(ranks_.size());
    t.add("rank", [&](size_t i) { return ranks_[i].rank; });
    t.add("idle_ns", [&](size_t i) { return rows[i].idle; });
    t.add("compute_ns", [&](size_t i) { return rows[i].compute; });
    t.add("span_ns", [&](size_t i) { return rows[i].span; });
    return t.finish();
}

py::dict HtaTrace::kernelTypeTime(bool includeMemory) const {
    const std::vector<HtaKernelType> analysed =
        includeMemory ? std::vector{HtaKernelType::Computation, HtaKernelType::Communication, HtaKernelType::Memory}
                      : std::vector{HtaKernelType::Computation, HtaKernelType::Communication};
    std::vector<int> rankOf;
    std::vector<std::string> label;
    std::vector<double> time;
    for (const auto& r : ranks_) {
        std::vector<std::pair<std::vector<Span>, int>> typed;
        for (size_t bit = 0; bit < analysed.size(); ++bit)
            typed.emplace_back(htaMerge(spansOf(r, [&](size_t i) { return r.type[i] == analysed[bit]; })), 1 << bit);
        const auto events = statusEvents(typed);
        std::map<int, double> byRunning;
        int running = 0;
        for (size_t k = 0; k + 1 < events.size(); ++k) {
            running += events[k].delta;
            if (running <= 0) continue;
            // HTA truncates each piece to whole microseconds (astype(int)).
            byRunning[running] += std::trunc(us(events[k + 1].time - events[k].time));
        }
        std::map<std::string, double> byLabel;
        for (const auto& [value, t] : byRunning) {
            std::string name;
            for (size_t bit = 0; bit < analysed.size(); ++bit)
                if (value & (1 << bit))
                    name += (name.empty() ? "" : " overlapping ") + std::string(htaKernelTypeName(analysed[bit]));
            byLabel[name] += t;
        }
        for (const auto& [name, t] : byLabel) {
            if (t == 0) continue;  // HTA's zero rows come from its unstable sort of ties
            rankOf.push_back(r.rank);
            label.push_back(name);
            time.push_back(t);
        }
    }
    Columns t(rankOf.size());
    t.add("rank", [&](size_t i) { return rankOf[i]; });
    t.add("kernel_type", [&](size_t i) { return label[i]; });
    t.add("time_us", [&](size_t i) { return time[i]; });
    return t.finish();
}

py::dict HtaTrace::kernelNameStats() const {
    // pandas' groupby("name")["dur"].agg(["sum", "max", "min", "mean", "std"])
    // per rank and kernel type, as its Cython computes them: Kahan-compensated
    // sums, Welford's variance (ddof 1), rows in order.
    struct Stats {
        size_t count = 0;
        double sum = 0, compensation = 0, max = 0, min = 0, mean = 0, ssqdm = 0;
    };
    std::vector<int> rank;
    std::vector<HtaKernelType> type;
    std::vector<uint32_t> name;
    std::vector<Stats> stats;
    for (const auto& r : ranks_) {
        std::map<std::pair<HtaKernelType, uint32_t>, Stats> of;
        for (size_t i = 0; i < r.start.size(); ++i) {
            if (r.type[i] == HtaKernelType::Other) continue;
            Stats& st = of[{r.type[i], r.name[i]}];
            const double v = us(r.end[i] - r.start[i]);
            const double y = v - st.compensation;
            const double t = st.sum + y;
            st.compensation = t - st.sum - y;
            st.sum = t;
            st.max = st.count ? std::max(st.max, v) : v;
            st.min = st.count ? std::min(st.min, v) : v;
            ++st.count;
            const double old = st.mean;
            st.mean += (v - st.mean) / static_cast<double>(st.count);
            st.ssqdm += (v - old) * (v - st.mean);
        }
        for (const auto& [key, st] : of) {
            rank.push_back(r.rank);
            type.push_back(key.first);
            name.push_back(key.second);
            stats.push_back(st);
        }
    }
    Columns t(rank.size());
    t.add("rank", [&](size_t i) { return rank[i]; });
    t.add("kernel_type", [&](size_t i) -> std::string { return htaKernelTypeName(type[i]); });
    t.add("name", [&](size_t i) -> std::string { return names_[name[i]]; });
    t.add("sum", [&](size_t i) { return stats[i].sum; });
    t.add("max", [&](size_t i) { return stats[i].max; });
    t.add("min", [&](size_t i) { return stats[i].min; });
    t.add("mean", [&](size_t i) { return stats[i].sum / static_cast<double>(stats[i].count); });
    t.add("std", [&](size_t i) -> std::optional<double> {
        if (stats[i].count < 2) return std::nullopt;
        return std::sqrt(stats[i].ssqdm / static_cast<double>(stats[i].count - 1));
    });
    return t.finish();
}

py::dict HtaTrace::idleIntervals(int rank, double consecutiveKernelDelayUs) const {
    const HtaRank& r = rankData(rank);
    // Streams in order; events within one in start order, as HTA sorts them.
    std::map<uint32_t, std::vector<size_t>> byStream;
    for (size_t i = 0; i < r.start.size(); ++i)
        if (r.kind[i] != HtaEventKind::Sync) byStream[r.stream[i]].push_back(i);
    std::vector<uint32_t> stream;
    std::vector<double> gap;
    std::vector<int> category;
    for (auto& [s, events] : byStream) {
        // Ties in start (an event rounded to nothing and the next one) are
        // HTA's unstable sort's to order; the shorter goes first here.
        std::stable_sort(events.begin(), events.end(), [&](size_t a, size_t b) {
            return r.start[a] < r.start[b] || (r.start[a] == r.start[b] && r.end[a] < r.end[b]);
        });
        for (size_t k = 0; k < events.size(); ++k) {
            stream.push_back(s);
            if (k == 0) {
                gap.push_back(std::numeric_limits<double>::quiet_NaN());
                category.push_back(2);
                continue;
            }
            const size_t i = events[k], previous = events[k - 1];
            const double interval = us(r.start[i] - r.end[previous]);
            const bool hostWait = r.launchStart[i] && *r.launchStart[i] > r.end[previous];
            gap.push_back(interval);
            category.push_back(hostWait ? 0 : interval < consecutiveKernelDelayUs ? 1 : 2);
        }
    }
    Columns t(stream.size());
    t.add("stream", [&](size_t i) { return stream[i]; });
    t.add("idle_interval", [&](size_t i) { return gap[i]; });
    t.add("idle_category", [&](size_t i) { return category[i]; });
    return t.finish();
}

py::dict HtaTrace::launchStats(int rank, bool includeMemoryEvents) const {
    const HtaRank& r = rankData(rank);
    std::unordered_set<std::string_view> launches = {"cudaLaunchKernel", "cudaLaunchKernelExC",
                                                     "runFunction - job_prep_and_submit_for_execution"};
    if (includeMemoryEvents) launches.insert({"cudaMemcpyAsync", "cudaMemsetAsync"});
    std::unordered_set<uint32_t> correlations;
    std::vector<size_t> calls;  // host rows that are calls, any name (HTA joins on correlation alone)
    for (size_t i = 0; i < r.hostStart.size(); ++i) {
        if (r.hostKind[i] != HtaHostKind::Runtime && r.hostKind[i] != HtaHostKind::Driver) continue;
        calls.push_back(i);
        if (launches.count(names_[r.hostName[i]])) correlations.insert(r.hostCorrelation[i]);
    }
    std::unordered_multimap<uint32_t, size_t> gpuOf;
    for (size_t i = 0; i < r.start.size(); ++i)
        if (correlations.count(r.correlation[i])) gpuOf.emplace(r.correlation[i], i);
    std::vector<uint32_t> correlation;
    std::vector<double> cpuDuration, gpuDuration, delay;
    for (size_t c : calls) {
        if (!correlations.count(r.hostCorrelation[c])) continue;
        auto [first, last] = gpuOf.equal_range(r.hostCorrelation[c]);
        std::vector<size_t> gpu;
        for (auto it = first; it != last; ++it) gpu.push_back(it->second);
        std::sort(gpu.begin(), gpu.end());
        const TimeNs cpu = r.hostEnd[c] - r.hostStart[c];
        for (size_t g : gpu) {
            correlation.push_back(r.hostCorrelation[c]);
            cpuDuration.push_back(us(cpu));
            gpuDuration.push_back(us(r.end[g] - r.start[g]));
            delay.push_back(std::max(0.0, us(r.start[g] - r.hostStart[c] - cpu)));
        }
    }
    Columns t(correlation.size());
    t.add("correlation", [&](size_t i) { return correlation[i]; });
    t.add("cpu_duration", [&](size_t i) { return cpuDuration[i]; });
    t.add("gpu_duration", [&](size_t i) { return gpuDuration[i]; });
    t.add("launch_delay", [&](size_t i) { return delay[i]; });
    return t.finish();
}

}  // namespace osc::python

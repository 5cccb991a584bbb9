// HTA's five computations (hta_engine.h) over the events hta_trace.cpp kept.
#include "python/src/hta_engine.h"
#include "python/src/columns.h"
#include "python/src/correlation_map.h"
#include "python/src/sorted_runs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <unordered_map>

namespace osc::python {
namespace {

using Span = HtaSpan;

// (start, end) with the longest first among equal starts: the order
// htaMerge's groups are made in. A type, not a function, so that the sorts
// inline it.
struct MergeOrder {
    bool operator()(const Span& a, const Span& b) const {
        return a.start < b.start || (a.start == b.start && a.end > b.end);
    }
};

// hta/utils/utils.py merge_kernel_intervals: sorted by start, a new group
// wherever a start lies beyond every earlier end; a group spans its first
// start to its largest end. Negative-length events (inward rounding) stay
// as HTA keeps them. Where starts tie, HTA's unstable sort decides whether
// a negative event opens a group of its own; here the longest goes first,
// so it never does (docs/python.md). The rank's events come in start
// order, nearly in this one (spans equal by it are equal, so a stable sort
// is as good as HTA's).
std::vector<Span> htaMerge(std::vector<Span> spans) {
    sortNearlyOrdered(spans.begin(), spans.end(), MergeOrder{});
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

template <typename Keep>
std::vector<Span> spansOf(const HtaRank& r, Keep keep) {
    std::vector<Span> spans;
    spans.reserve(r.start.size());
    for (size_t i = 0; i < r.start.size(); ++i)
        if (keep(i)) spans.push_back({r.start[i], r.end[i]});
    return spans;
}

std::vector<Span> unionOfType(const HtaRank& r, HtaKernelType type) {
    return htaMerge(spansOf(r, [&](size_t i) { return r.type[i] == type; }));
}

}  // namespace

// One type's groups are disjoint and ordered, so its rows are in order but
// where a group of negative length (inward rounding) puts its end just
// before its start: each type's rows are sorted alone, then merged, which
// orders them as one stable sort of them all would.
std::vector<HtaStatusEvent> htaStatusEvents(const std::vector<std::pair<const std::vector<HtaSpan>*, int>>& typed) {
    size_t rows = 0;
    for (const auto& [groups, value] : typed) rows += 2 * groups->size();
    std::vector<HtaStatusEvent> events;
    events.reserve(rows);
    std::vector<size_t> bounds{0};
    for (const auto& [groups, value] : typed) {
        for (const auto& g : *groups) {
            events.push_back({g.start, value});
            events.push_back({g.end, -value});
        }
        bounds.push_back(events.size());
    }
    stableSortRuns(events, bounds, [](const HtaStatusEvent& a, const HtaStatusEvent& b) { return a.time < b.time; });
    return events;
}

HtaUnions htaUnionsOf(const HtaRank& r) {
    HtaUnions u;
    u.all = htaMerge(spansOf(r, [](size_t) { return true; }));
    u.communication = unionOfType(r, HtaKernelType::Communication);
    u.computation = unionOfType(r, HtaKernelType::Computation);
    u.memory = unionOfType(r, HtaKernelType::Memory);
    return u;
}

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

double roundLikeNumpy(double value, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::nearbyint(value * scale) / scale;
}

namespace {

// HTA's percentages: (100 * (part / whole)).round(2), in float64.
double percentOf(double part, double whole) { return roundLikeNumpy(100 * (part / whole), 2); }

}  // namespace

py::dict HtaTrace::overlap() const {
    std::vector<double> percent;
    for (const auto& r : ranks_) {
        const HtaUnions& u = r.unions;
        const auto events = htaStatusEvents({{&u.communication, 1}, {&u.computation, 2}});
        TimeNs both = 0;
        int running = 0;
        for (size_t k = 0; k + 1 < events.size(); ++k) {
            running += events[k].delta;
            if (running == 3) both += events[k + 1].time - events[k].time;
        }
        // No communication: 0 / 0, NaN as in pandas.
        percent.push_back(percentOf(static_cast<double>(both), static_cast<double>(runLength(u.communication))));
    }
    Columns t(ranks_.size());
    t.add("rank", [&](size_t i) { return ranks_[i].rank; });
    t.add("comp_comm_overlap_pctg", [&](size_t i) { return percent[i]; });
    return t.finish();
}

py::dict HtaTrace::temporal() const {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    struct Row {
        double idle = kNaN, compute = kNaN, span = kNaN;  // us; NaN for a rank without GPU events
    };
    std::vector<Row> rows;
    for (const auto& r : ranks_) {
        const HtaUnions& u = r.unions;
        if (u.all.empty()) {
            rows.push_back({});
            continue;
        }
        const TimeNs span = u.all.back().end - u.all.front().start;
        rows.push_back({htaUs(span - runLength(u.all)), htaUs(runLength(u.computation)), htaUs(span)});
    }
    const auto nonCompute = [&](size_t i) { return rows[i].span - rows[i].compute - rows[i].idle; };
    Columns t(ranks_.size());
    t.add("rank", [&](size_t i) { return ranks_[i].rank; });
    t.add("idle_time(us)", [&](size_t i) { return rows[i].idle; });
    t.add("compute_time(us)", [&](size_t i) { return rows[i].compute; });
    t.add("non_compute_time(us)", nonCompute);
    t.add("kernel_time(us)", [&](size_t i) { return rows[i].span; });
    t.add("idle_time_pctg", [&](size_t i) { return percentOf(rows[i].idle, rows[i].span); });
    t.add("compute_time_pctg", [&](size_t i) { return percentOf(rows[i].compute, rows[i].span); });
    t.add("non_compute_time_pctg", [&](size_t i) { return percentOf(nonCompute(i), rows[i].span); });
    return t.finish();
}

namespace {

// One rank's GPU events but syncs, by stream (streams in order), each
// stream's in start order as HTA sorts them. Ties in start (an event rounded
// to nothing and the next one) are HTA's unstable sort's to order; the
// shorter goes first here.
std::map<uint32_t, std::vector<size_t>> eventsByStream(const HtaRank& r) {
    std::map<uint32_t, std::vector<size_t>> byStream;
    for (size_t i = 0; i < r.start.size(); ++i)
        if (r.kind[i] != HtaEventKind::Sync) byStream[r.stream[i]].push_back(i);
    const auto before = [&](size_t a, size_t b) {
        return r.start[a] < r.start[b] || (r.start[a] == r.start[b] && r.end[a] < r.end[b]);
    };
    for (auto& [s, events] : byStream)
        if (!std::is_sorted(events.begin(), events.end(), before))
            std::stable_sort(events.begin(), events.end(), before);
    return byStream;
}

// The gaps of one stream's events, in order: f(gap in us, category), the
// first with NaN and category 2 (other).
template <typename Gap>
void forEachGap(const HtaRank& r, const std::vector<size_t>& events, double consecutiveKernelDelayUs, Gap gap) {
    for (size_t k = 0; k < events.size(); ++k) {
        if (k == 0) {
            gap(std::numeric_limits<double>::quiet_NaN(), 2);
            continue;
        }
        const size_t i = events[k], previous = events[k - 1];
        const double interval = htaUs(r.start[i] - r.end[previous]);
        const bool hostWait = r.launchStart[i] && *r.launchStart[i] > r.end[previous];
        gap(interval, hostWait ? 0 : interval < consecutiveKernelDelayUs ? 1 : 2);
    }
}

}  // namespace

py::dict HtaTrace::idleIntervals(int rank, double consecutiveKernelDelayUs) const {
    const HtaRank& r = rankData(rank);
    std::vector<uint32_t> stream;
    std::vector<double> gap;
    std::vector<int> category;
    for (const auto& [s, events] : eventsByStream(r))
        forEachGap(r, events, consecutiveKernelDelayUs, [&](double interval, int c) {
            stream.push_back(s);
            gap.push_back(interval);
            category.push_back(c);
        });
    Columns t(stream.size());
    t.add("stream", [&](size_t i) { return stream[i]; });
    t.add("idle_interval", [&](size_t i) { return gap[i]; });
    t.add("idle_category", [&](size_t i) { return category[i]; });
    return t.finish();
}

py::dict HtaTrace::idleSums(const std::vector<int>& ranks, double consecutiveKernelDelayUs) const {
    std::vector<int> rankOf, category;
    std::vector<uint32_t> part, stream;
    std::vector<double> idle;
    for (size_t p = 0; p < ranks.size(); ++p) {
        const int rank = ranks[p];
        const HtaRank& r = rankData(rank);
        for (const auto& [s, events] : eventsByStream(r)) {
            // pandas' group-by sum: Kahan-compensated, NaN skipped, 0 for a
            // category of NaN only; categories in order.
            struct Sum {
                bool seen = false;
                double sum = 0, compensation = 0;
            };
            Sum sums[3];
            forEachGap(r, events, consecutiveKernelDelayUs, [&](double interval, int c) {
                Sum& st = sums[c];
                st.seen = true;
                if (std::isnan(interval)) return;
                const double y = interval - st.compensation;
                const double t = st.sum + y;
                st.compensation = t - st.sum - y;
                st.sum = t;
            });
            for (int c = 0; c < 3; ++c) {
                if (!sums[c].seen) continue;
                part.push_back(static_cast<uint32_t>(p));
                rankOf.push_back(rank);
                stream.push_back(s);
                category.push_back(c);
                idle.push_back(sums[c].sum);
            }
        }
    }
    Columns t(rankOf.size());
    t.add("part", [&](size_t i) { return part[i]; });
    t.add("rank", [&](size_t i) { return rankOf[i]; });
    t.add("stream", [&](size_t i) { return stream[i]; });
    t.add("idle_category", [&](size_t i) { return category[i]; });
    t.add("idle_time", [&](size_t i) { return idle[i]; });
    return t.finish();
}

py::dict HtaTrace::launchStats(int rank, bool includeMemoryEvents) const {
    const HtaRank& r = rankData(rank);
    std::vector<std::string_view> launchNames = {"cudaLaunchKernel", "cudaLaunchKernelExC",
                                                 "runFunction - job_prep_and_submit_for_execution"};
    if (includeMemoryEvents) launchNames.insert(launchNames.end(), {"cudaMemcpyAsync", "cudaMemsetAsync"});
    // Whether a name launches, decided once per name rather than once per call.
    std::vector<char> launching(names_.size(), 0);
    for (size_t n = 0; n < names_.size(); ++n)
        launching[n] = std::find(launchNames.begin(), launchNames.end(), names_[n]) != launchNames.end();
    std::vector<uint32_t> launched;  // correlations of launching calls
    std::vector<size_t> calls;       // host rows that are calls, any name (HTA joins on correlation alone)
    launched.reserve(r.hostStart.size());
    calls.reserve(r.hostStart.size());
    for (size_t i = 0; i < r.hostStart.size(); ++i) {
        if (r.hostKind[i] != HtaHostKind::Runtime && r.hostKind[i] != HtaHostKind::Driver) continue;
        calls.push_back(i);
        if (launching[r.hostName[i]]) launched.push_back(r.hostCorrelation[i]);
    }
    // The launching correlations numbered 0..slots-1; each slot's GPU rows in
    // row order: rows[first[k]] .. rows[first[k + 1]).
    sortNearlyOrdered(launched.begin(), launched.end(), std::less<>{});  // calls come in correlation order, nearly
    launched.erase(std::unique(launched.begin(), launched.end()), launched.end());
    CorrelationMap<uint32_t> slotOf(launched);
    for (size_t k = 0; k < launched.size(); ++k) slotOf.set(launched[k], static_cast<uint32_t>(k));
    std::vector<uint32_t> first(launched.size() + 1, 0), rows;
    for (size_t i = 0; i < r.start.size(); ++i)
        if (const uint32_t* k = slotOf.find(r.correlation[i])) ++first[*k + 1];
    for (size_t k = 0; k < launched.size(); ++k) first[k + 1] += first[k];
    rows.resize(first.back());
    {
        std::vector<uint32_t> filled(first.begin(), first.end() - 1);
        for (size_t i = 0; i < r.start.size(); ++i)
            if (const uint32_t* k = slotOf.find(r.correlation[i])) rows[filled[*k]++] = static_cast<uint32_t>(i);
    }
    std::vector<uint32_t> correlation;
    std::vector<double> cpuDuration, gpuDuration, delay;
    correlation.reserve(rows.size());  // as many unless two calls share a correlation
    for (auto* column : {&cpuDuration, &gpuDuration, &delay}) column->reserve(rows.size());
    for (size_t c : calls) {
        const uint32_t key = r.hostCorrelation[c];
        const uint32_t* k = slotOf.find(key);
        if (!k) continue;
        const TimeNs cpu = r.hostEnd[c] - r.hostStart[c];
        for (uint32_t at = first[*k]; at < first[*k + 1]; ++at) {
            const size_t g = rows[at];
            correlation.push_back(key);
            cpuDuration.push_back(htaUs(cpu));
            gpuDuration.push_back(htaUs(r.end[g] - r.start[g]));
            delay.push_back(std::max(0.0, htaUs(r.start[g] - r.hostStart[c] - cpu)));
        }
    }
    Columns t(correlation.size());
    t.add("correlation", [&](size_t i) { return correlation[i]; });
    // The columns as they are, without a copy: a rank launches tens of thousands.
    t.put("cpu_duration", moveToArray(std::move(cpuDuration)));
    t.put("gpu_duration", moveToArray(std::move(gpuDuration)));
    t.put("launch_delay", moveToArray(std::move(delay)));
    return t.finish();
}

}  // namespace osc::python

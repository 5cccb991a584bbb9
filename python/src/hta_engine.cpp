#include "python/src/hta_engine.h"

#include "analyzer/import/gz_reader.h"
#include "analyzer/import/kineto_names.h"
#include "python/src/columns.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace osc::python {
namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Python's re.match with `.*` stops at the first newline; so do these.
std::string_view firstLine(std::string_view s) { return s.substr(0, s.find('\n')); }
bool lineHas(std::string_view s, std::string_view part, size_t from = 0) {
    return firstLine(s).find(part, from) != std::string_view::npos;
}

// hta/common/types.py: CommunicateKernelGroupingPattern.
bool htaComm(std::string_view n) {
    return startsWith(n, "nccl") || startsWith(n, "hip") || startsWith(n, "hccl") || lineHas(n, "ncclKernel");
}
// MemoryKernelGroupingPattern.
bool htaMemory(std::string_view n) {
    return startsWith(n, "Memcpy") || startsWith(n, "hipMemcpy") || startsWith(n, "Memset") ||
           startsWith(n, "hipMemset") || startsWith(n, "dma");
}
// ComputeKernelGroupingPattern, an inverse match.
bool htaCompute(std::string_view n) {
    const bool excluded = startsWith(n, "nccl") || lineHas(n, "Memcpy") || lineHas(n, "Memset") || lineHas(n, "dma") ||
                          lineHas(n, "Sync") || startsWith(n, "Stream Wait Event") ||
                          (startsWith(n, "cuda") && lineHas(n, "LaunchKernel", 4)) || startsWith(n, "runFunction") ||
                          startsWith(n, "hip") || startsWith(n, "job_exe") || startsWith(n, "packet") ||
                          startsWith(n, "pe_exe") || startsWith(n, "cpum_exe_subgraph") || startsWith(n, "hccl") ||
                          startsWith(n, "collective_subgraph_execution");
    return !excluded;
}

// ProfilerStepGroupingPattern: re.match(r"^ProfilerStep#(\d+)").
bool isProfilerStep(std::string_view n) {
    constexpr std::string_view prefix = "ProfilerStep#";
    return startsWith(n, prefix) && n.size() > prefix.size() && n[prefix.size()] >= '0' && n[prefix.size()] <= '9';
}

// cudaLaunchKernel_v7000 (Nsight Systems, our captures) is HTA's cudaLaunchKernel.
std::string_view withoutVersion(std::string_view name) {
    const auto v = name.rfind("_v");
    if (v == std::string_view::npos || v + 2 == name.size()) return name;
    for (size_t i = v + 2; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return name;
    return name.substr(0, v);
}

// A trace's timestamp (ns) as the float64 Python's json parses from its text
// ("1712195495519689.047" µs): correctly rounded, like from_chars.
double traceMicroseconds(TimeNs ns) {
    char text[48];
    char* p = text;
    if (ns < 0) {
        *p++ = '-';
        ns = -ns;
    }
    p = std::to_chars(p, text + sizeof text, ns / 1000).ptr;
    const TimeNs fraction = ns % 1000;
    *p++ = '.';
    *p++ = static_cast<char>('0' + fraction / 100);
    *p++ = static_cast<char>('0' + fraction / 10 % 10);
    *p++ = static_cast<char>('0' + fraction % 10);
    double value = 0;
    std::from_chars(text, p, value);
    return value;
}

// A PyTorch trace's baseTimeNanoseconds, 0 without one. Recent Kineto writes
// it before the events; older versions after them, so the whole file is read
// then (inflated by ISA-L: a fraction of what loading it took).
int64_t traceTimeBase(const std::string& path) {
    constexpr std::string_view key = "\"baseTimeNanoseconds\"";
    auto valueAfter = [&](const std::string& text, size_t at) -> std::optional<int64_t> {
        size_t i = at + key.size();
        while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '\n' || text[i] == '\t')) ++i;
        int64_t value = 0;
        const auto [end, error] = std::from_chars(text.data() + i, text.data() + text.size(), value);
        if (error != std::errc() || end == text.data() + i) return std::nullopt;
        return value;
    };
    GzReader in(path);
    std::vector<char> chunk(size_t{1} << 20);
    std::string head;
    while (head.size() < (size_t{1} << 20)) {
        const size_t n = in.read(chunk.data(), chunk.size());
        if (n == 0) break;
        head.append(chunk.data(), n);
        if (head.find("\"traceEvents\"") != std::string::npos) break;
    }
    const size_t events = head.find("\"traceEvents\"");
    if (const size_t at = head.find(key); at != std::string::npos && at < events)
        if (const auto v = valueAfter(head, at)) return *v;
    std::string tail = std::move(head);
    for (size_t n; (n = in.read(chunk.data(), chunk.size())) > 0;) {
        tail.append(chunk.data(), n);
        if (tail.size() > (size_t{1} << 21)) tail.erase(0, tail.size() - 65536);
    }
    const size_t closed = tail.rfind(']');
    if (const size_t at = tail.rfind(key); at != std::string::npos && (closed == std::string::npos || at > closed))
        if (const auto v = valueAfter(tail, at)) return *v;
    return 0;
}

// HTA's round_down_time_stamps on one event: end = ts + dur in float64, then
// ts up and end down to whole µs. Times are on the capture's timeline;
// `toTrace` moves them to the trace's own.
struct HtaClock {
    bool round = false;
    TimeNs toTrace = 0;
    std::pair<TimeNs, TimeNs> event(TimeNs start, TimeNs end) const {
        if (!round) return {start, end};
        const double ts = traceMicroseconds(start + toTrace);
        const double last = ts + traceMicroseconds(end - start);
        return {static_cast<TimeNs>(std::ceil(ts)) * 1000 - toTrace,
                static_cast<TimeNs>(std::floor(last)) * 1000 - toTrace};
    }
    TimeNs start(TimeNs t) const { return event(t, t).first; }
};

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

const char* typeName(HtaKernelType t) {
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

const char* kindName(HtaEventKind k) {
    switch (k) {
        case HtaEventKind::Kernel:
            return "kernel";
        case HtaEventKind::Memcpy:
            return "gpu_memcpy";
        case HtaEventKind::Memset:
            return "gpu_memset";
        case HtaEventKind::Sync:
            return "cuda_sync";
    }
    return "";
}

double us(TimeNs ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

HtaKernelType htaKernelType(std::string_view name) {
    if (htaComm(name)) return HtaKernelType::Communication;
    if (htaMemory(name)) return HtaKernelType::Memory;
    if (htaCompute(name)) return HtaKernelType::Computation;
    return HtaKernelType::Other;
}

uint32_t HtaTrace::nameId(std::string_view name) {
    auto [it, added] = nameIds_.try_emplace(std::string(name), static_cast<uint32_t>(names_.size()));
    if (added) names_.emplace_back(name);
    return it->second;
}

HtaTrace::HtaTrace(const Capture& capture, const HtaOptions& options) : options_(options) {
    const StringTable& strings = capture.strings;
    // HTA filters only when the job's symbols hold two or more ProfilerStep names.
    std::unordered_set<std::string_view> stepNames;
    for (const auto& p : capture.processes)
        for (uint32_t id : p.ranges.name)
            if (isProfilerStep(strings.at(id))) stepNames.insert(strings.at(id));
    const bool filter = stepNames.size() >= 2;

    std::map<int, HtaRank> byRank;
    std::map<int, std::string> fileOfRank;
    std::unordered_map<std::string, int64_t> baseOfFile;
    for (size_t pi = 0; pi < capture.processes.size(); ++pi) {
        const Process& p = capture.processes[pi];
        const auto format = p.meta.find("source_format");
        const bool kineto = format != p.meta.end() && format->second == "kineto";

        HtaClock clock;
        // HTA rounds a file whose timestamps have a fraction of a microsecond.
        if (options.roundToMicroseconds && kineto) {
            const auto given = options.traceTimeBase.find(p.sourcePath);
            if (given != options.traceTimeBase.end()) baseOfFile[p.sourcePath] = given->second;
            if (!baseOfFile.count(p.sourcePath)) baseOfFile[p.sourcePath] = traceTimeBase(p.sourcePath);
            clock.toTrace = capture.originUtcNs - baseOfFile[p.sourcePath];
            auto fractional = [&](const std::vector<TimeNs>& v) {
                return std::any_of(v.begin(), v.end(), [&](TimeNs t) { return (t + clock.toTrace) % 1000 != 0; });
            };
            bool any = fractional(p.apiCalls.start) || fractional(p.ranges.start) || fractional(p.cpuOps.start);
            for (const auto& d : p.devices)
                any = any || fractional(d.kernels.start) || fractional(d.copies.start) || fractional(d.memsets.start) ||
                      fractional(d.syncs.start);
            clock.round = any;
        }

        HtaRank r;
        r.rank = p.rank >= 0 ? p.rank : kineto ? 0 : static_cast<int>(pi);
        if (const auto given = options.rankOfFile.find(p.sourcePath); given != options.rankOfFile.end())
            r.rank = given->second;

        // Host calls, rounded like every event, and which of them HTA keeps.
        const auto& calls = p.apiCalls;
        std::unordered_map<uint32_t, TimeNs> launchOf;
        for (size_t i = 0; i < calls.size(); ++i)
            if (calls.correlation[i] != 0) launchOf[calls.correlation[i]] = clock.start(calls.start[i]);

        bool keepAllGpu = true;
        TimeNs cutoff = 0;
        bool cutoffInclusive = false;
        const bool anyHostEvent = calls.size() + p.ranges.size() + p.cpuOps.size() > 0;
        if (filter && anyHostEvent) {
            keepAllGpu = false;
            // GPU-side annotations have no stream in a trace, so HTA counts
            // them with the host events, ProfilerStep ones included.
            std::optional<TimeNs> lastStart, lastEnd;
            TimeNs firstHost = INT64_MAX, lastHost = INT64_MIN;
            auto host = [&](TimeNs s, TimeNs e) {
                const auto [rs, re] = clock.event(s, e);
                firstHost = std::min(firstHost, rs);
                lastHost = std::max(lastHost, re);
            };
            for (size_t i = 0; i < p.ranges.size(); ++i) {
                host(p.ranges.start[i], p.ranges.end[i]);
                if (!isProfilerStep(strings.at(p.ranges.name[i]))) continue;
                const auto [s, e] = clock.event(p.ranges.start[i], p.ranges.end[i]);
                lastStart = lastStart ? std::max(*lastStart, s) : s;
                lastEnd = lastEnd ? std::max(*lastEnd, e) : e;
            }
            for (size_t i = 0; i < calls.size(); ++i) host(calls.start[i], calls.end[i]);
            for (size_t i = 0; i < p.cpuOps.size(); ++i) host(p.cpuOps.start[i], p.cpuOps.end[i]);
            cutoffInclusive = options.includeLastProfilerStep;
            cutoff = options.includeLastProfilerStep ? lastEnd.value_or(lastHost) : lastStart.value_or(firstHost);
        }
        auto keptCall = [&](size_t i) {
            if (keepAllGpu) return true;
            const TimeNs s = clock.start(calls.start[i]);
            return cutoffInclusive ? s <= cutoff : s < cutoff;
        };
        std::unordered_set<uint32_t> keptCorrelations;
        for (size_t i = 0; i < calls.size(); ++i) {
            if (!keptCall(i)) continue;
            const auto [s, e] = clock.event(calls.start[i], calls.end[i]);
            r.callStart.push_back(s);
            r.callEnd.push_back(e);
            r.callName.push_back(nameId(strings.at(calls.name[i])));
            r.callCorrelation.push_back(calls.correlation[i]);
            if (calls.correlation[i] != 0) keptCorrelations.insert(calls.correlation[i]);
        }

        struct Event {
            TimeNs start, end;
            uint32_t stream, correlation, name;
            HtaEventKind kind;
        };
        std::vector<Event> events;
        auto add = [&](TimeNs s, TimeNs e, uint32_t stream, uint32_t correlation, std::string_view name,
                       HtaEventKind kind) {
            if (!keepAllGpu && (correlation == 0 || !keptCorrelations.count(correlation))) return;
            const auto [rs, re] = clock.event(s, e);
            events.push_back({rs, re, stream, correlation, nameId(name), kind});
        };
        for (const auto& d : p.devices) {
            const auto& k = d.kernels;
            for (size_t i = 0; i < k.size(); ++i)
                add(k.start[i], k.end[i], k.stream[i], k.correlation[i], strings.at(k.name[i]), HtaEventKind::Kernel);
            const auto& c = d.copies;
            for (size_t i = 0; i < c.size(); ++i) {
                // Kineto's own spelling, which is how the trace named it.
                const std::string name = "Memcpy " + std::string(kineto::copyKindName(c.copyKind[i])) + " (" +
                                         std::string(kineto::memKindName(c.srcKind[i])) + " -> " +
                                         std::string(kineto::memKindName(c.dstKind[i])) + ")";
                add(c.start[i], c.end[i], c.stream[i], c.correlation[i], name, HtaEventKind::Memcpy);
            }
            const auto& m = d.memsets;
            for (size_t i = 0; i < m.size(); ++i)
                add(m.start[i], m.end[i], m.stream[i], m.correlation[i], "Memset (Device)", HtaEventKind::Memset);
            const auto& s = d.syncs;
            for (size_t i = 0; i < s.size(); ++i)
                if (s.stream[i] != kNoId)
                    add(s.start[i], s.end[i], s.stream[i], s.correlation[i], kineto::syncTypeName(s.type[i]),
                        HtaEventKind::Sync);
        }
        std::stable_sort(events.begin(), events.end(),
                         [](const Event& a, const Event& b) { return a.start < b.start; });
        for (const auto& e : events) {
            r.start.push_back(e.start);
            r.end.push_back(e.end);
            r.stream.push_back(e.stream);
            r.correlation.push_back(e.correlation);
            r.name.push_back(e.name);
            r.kind.push_back(e.kind);
            r.type.push_back(htaKernelType(names_[e.name]));
            const auto launch = e.correlation != 0 ? launchOf.find(e.correlation) : launchOf.end();
            r.launchStart.push_back(launch != launchOf.end() ? std::optional<TimeNs>(launch->second) : std::nullopt);
        }
        if (const auto seen = fileOfRank.find(r.rank); seen != fileOfRank.end())
            warnings_.push_back("rank " + std::to_string(r.rank) + " is in both " + seen->second + " and " +
                                p.sourcePath + "; like HTA, only the latter is analysed");
        fileOfRank[r.rank] = p.sourcePath;
        byRank[r.rank] = std::move(r);
    }
    for (auto& [rank, data] : byRank) ranks_.push_back(std::move(data));
}

std::vector<int> HtaTrace::ranks() const {
    std::vector<int> out;
    for (const auto& r : ranks_) out.push_back(r.rank);
    return out;
}

const HtaRank& HtaTrace::rankData(int rank) const {
    for (const auto& r : ranks_)
        if (r.rank == rank) return r;
    throw std::out_of_range("no trace for rank " + std::to_string(rank));
}

namespace {

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
                    name += (name.empty() ? "" : " overlapping ") + std::string(typeName(analysed[bit]));
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

py::dict HtaTrace::gpuEvents() const {
    std::vector<std::pair<const HtaRank*, size_t>> rows;
    for (const auto& r : ranks_)
        for (size_t i = 0; i < r.start.size(); ++i) rows.emplace_back(&r, i);
    Columns t(rows.size());
    t.add("rank", [&](size_t i) { return rows[i].first->rank; });
    t.add("kind", [&](size_t i) -> std::string { return kindName(rows[i].first->kind[rows[i].second]); });
    t.add("stream", [&](size_t i) { return rows[i].first->stream[rows[i].second]; });
    t.add("start_ns", [&](size_t i) { return rows[i].first->start[rows[i].second]; });
    t.add("end_ns", [&](size_t i) { return rows[i].first->end[rows[i].second]; });
    t.add("dur",
          [&](size_t i) { return us(rows[i].first->end[rows[i].second] - rows[i].first->start[rows[i].second]); });
    CategoryColumn name, type;
    for (const auto& [r, i] : rows) {
        name.push(r->name[i], names_[r->name[i]]);
        type.push(static_cast<uint32_t>(r->type[i]), typeName(r->type[i]));
    }
    t.put("name", name.finish());
    t.put("kernel_type", type.finish());
    t.add("correlation", [&](size_t i) { return rows[i].first->correlation[rows[i].second]; });
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
    for (size_t i = 0; i < r.callStart.size(); ++i)
        if (launches.count(withoutVersion(names_[r.callName[i]]))) correlations.insert(r.callCorrelation[i]);
    std::unordered_multimap<uint32_t, size_t> gpuOf;
    for (size_t i = 0; i < r.start.size(); ++i)
        if (correlations.count(r.correlation[i])) gpuOf.emplace(r.correlation[i], i);
    std::vector<uint32_t> correlation;
    std::vector<double> cpuDuration, gpuDuration, delay;
    for (size_t c = 0; c < r.callStart.size(); ++c) {
        if (!correlations.count(r.callCorrelation[c])) continue;
        auto [first, last] = gpuOf.equal_range(r.callCorrelation[c]);
        std::vector<size_t> gpu;
        for (auto it = first; it != last; ++it) gpu.push_back(it->second);
        std::sort(gpu.begin(), gpu.end());
        for (size_t g : gpu) {
            correlation.push_back(r.callCorrelation[c]);
            cpuDuration.push_back(us(r.callEnd[c] - r.callStart[c]));
            gpuDuration.push_back(us(r.end[g] - r.start[g]));
            delay.push_back(std::max(0.0, us(r.start[g] - r.callStart[c] - (r.callEnd[c] - r.callStart[c]))));
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

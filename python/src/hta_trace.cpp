// How HTA sees a trace (hta_engine.h): kernel types by HTA's name patterns,
// its rounding of fractional microseconds, its trimming of the last
// ProfilerStep, one rank per file.
#include "analyzer/import/gz_reader.h"
#include "analyzer/import/kineto_names.h"
#include "python/src/hta_engine.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
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

}  // namespace osc::python

// How HTA sees a trace (hta_engine.h): kernel types by HTA's name patterns,
// its rounding of fractional microseconds, its trimming of the last
// ProfilerStep, one rank per file.
#include "analyzer/import/kineto_names.h"
#include "python/src/correlation_map.h"
#include "python/src/hta_engine.h"
#include "python/src/hta_head.h"
#include "python/src/sorted_runs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>
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
    // Below 2^53 both operands are exact and IEEE division rounds the exact
    // quotient, which is the decimal itself: the same double, faster.
    constexpr TimeNs exact = TimeNs{1} << 53;
    if (ns > -exact && ns < exact) return static_cast<double>(ns) / 1000.0;
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

// One process's times moved from its capture's timeline onto the trace's
// own clock (`toTrace`: a PyTorch trace's timestamps; other captures' UTC),
// which every file of a job shares, and with `round` HTA's
// round_down_time_stamps on each event: end = ts + dur in float64, then ts
// up and end down to whole µs.
struct HtaClock {
    bool round = false;
    TimeNs toTrace = 0;
    std::pair<TimeNs, TimeNs> event(TimeNs start, TimeNs end) const {
        if (!round) return {start + toTrace, end + toTrace};
        const double ts = traceMicroseconds(start + toTrace);
        const double last = ts + traceMicroseconds(end - start);
        return {static_cast<TimeNs>(std::ceil(ts)) * 1000, static_cast<TimeNs>(std::floor(last)) * 1000};
    }
    TimeNs start(TimeNs t) const { return event(t, t).first; }
};

}  // namespace

std::string_view withoutVersion(std::string_view name) {
    const auto v = name.rfind("_v");
    if (v == std::string_view::npos || v + 2 == name.size()) return name;
    for (size_t i = v + 2; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return name;
    return name.substr(0, v);
}

HtaKernelType htaKernelType(std::string_view name) {
    if (htaComm(name)) return HtaKernelType::Communication;
    if (htaMemory(name)) return HtaKernelType::Memory;
    if (htaCompute(name)) return HtaKernelType::Computation;
    return HtaKernelType::Other;
}

uint32_t HtaNames::id(std::string_view name) {
    auto [it, added] = ids.try_emplace(std::string(name), static_cast<uint32_t>(names.size()));
    if (added) names.emplace_back(name);
    return it->second;
}

uint32_t HtaNames::id(const StringTable& strings, uint32_t stringId) {
    if (stringId >= ofString.size()) return id(strings.at(stringId));
    if (ofString[stringId] == kNoId) ofString[stringId] = id(strings.at(stringId));
    return ofString[stringId];
}

namespace {

// pandas.to_numeric(downcast="integer") over values from lo to hi.
std::string downcast(int64_t lo, int64_t hi) {
    if (lo >= INT8_MIN && hi <= INT8_MAX) return "int8";
    if (lo >= INT16_MIN && hi <= INT16_MAX) return "int16";
    if (lo >= INT32_MIN && hi <= INT32_MAX) return "int32";
    return "int64";
}

// HTA's iteration numbers: "ProfilerStep#12" -> 12 (add_iteration's regex).
std::optional<int> stepNumber(std::string_view n) {
    if (!isProfilerStep(n)) return std::nullopt;
    int value = 0;
    const auto digits = n.substr(std::string_view("ProfilerStep#").size());
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc()) return std::nullopt;
    return value;
}

// add_iteration: the last ProfilerStep whose [start, end) holds t, steps in
// the order the trace lists them (host annotations before GPU ones). Every
// host row and kernel asks: the answer is kept per stretch between two
// window edges, found by binary search (a search through every window took
// a third of a 25 MB trace's view).
class StepWindows {
public:
    void add(TimeNs start, TimeNs end, int number) {
        if (start < end) windows_.push_back({start, end, number});
    }
    // After the last add().
    void finish() {
        for (const auto& w : windows_) {
            edges_.push_back(w.start);
            edges_.push_back(w.end);
        }
        std::sort(edges_.begin(), edges_.end());
        edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
        std::vector<size_t> byStart(windows_.size()), byEnd(windows_.size());
        std::iota(byStart.begin(), byStart.end(), size_t{0});
        std::iota(byEnd.begin(), byEnd.end(), size_t{0});
        std::sort(byStart.begin(), byStart.end(),
                  [&](size_t a, size_t b) { return windows_[a].start < windows_[b].start; });
        std::sort(byEnd.begin(), byEnd.end(), [&](size_t a, size_t b) { return windows_[a].end < windows_[b].end; });
        std::set<size_t> open;  // by place in the trace: the last one answers
        size_t s = 0, e = 0;
        for (const TimeNs edge : edges_) {
            for (; e < byEnd.size() && windows_[byEnd[e]].end == edge; ++e) open.erase(byEnd[e]);
            for (; s < byStart.size() && windows_[byStart[s]].start == edge; ++s) open.insert(byStart[s]);
            stretch_.push_back(open.empty() ? -1 : windows_[*open.rbegin()].number);
        }
    }
    // Asked in time order (host rows are), the stretch of the last answer or
    // the next one answers without a search.
    int at(TimeNs t) const {
        for (size_t k = last_; k < last_ + 2 && k < edges_.size(); ++k)
            if (edges_[k] <= t && (k + 1 == edges_.size() || t < edges_[k + 1])) {
                last_ = k;
                return stretch_[k];
            }
        const auto after = std::upper_bound(edges_.begin(), edges_.end(), t);
        if (after == edges_.begin()) return -1;
        last_ = static_cast<size_t>(after - edges_.begin()) - 1;
        return stretch_[last_];
    }

private:
    struct Window {
        TimeNs start, end;
        int number;
    };
    std::vector<Window> windows_;
    std::vector<TimeNs> edges_;
    std::vector<int> stretch_;  // the answer from edges_[i] to edges_[i + 1]
    mutable size_t last_ = 0;   // the stretch of the last answer
};

}  // namespace

std::vector<std::string> profilerStepNames(const Capture& capture) {
    std::unordered_set<std::string_view> seen;
    for (const auto& p : capture.processes)
        for (uint32_t id : p.ranges.name)
            if (isProfilerStep(capture.strings.at(id))) seen.insert(capture.strings.at(id));
    return {seen.begin(), seen.end()};
}

HtaCaptureView seeAsHta(const Capture& capture, const HtaOptions& options, bool filter) {
    HtaCaptureView view;
    HtaNames& names = view.names;
    const auto nameId = [&](auto&&... a) { return names.id(a...); };
    TimeNs& origin = view.origin;
    const StringTable& strings = capture.strings;
    names.ofString.assign(strings.size(), kNoId);
    // HTA's kernel type of each name, found once per name (by its patterns) rather than once per event.
    std::vector<std::optional<HtaKernelType>> typeOfName;
    const auto typeOf = [&](uint32_t name) {
        if (name >= typeOfName.size()) typeOfName.resize(names.names.size());
        auto& type = typeOfName[name];
        if (!type) type = htaKernelType(names.names[name]);
        return *type;
    };
    view.processes = capture.processes.size();
    for (size_t pi = 0; pi < capture.processes.size(); ++pi) {
        const Process& p = capture.processes[pi];
        const auto format = p.meta.find("source_format");
        const bool kineto = format != p.meta.end() && format->second == "kineto";

        HtaClock clock;
        std::optional<TraceHead::Row> firstRow;
        clock.toTrace = capture.originUtcNs;
        if (kineto) {
            const TraceHead head = readTraceHead(p.sourcePath, options.roundToMicroseconds);
            clock.toTrace = capture.originUtcNs - head.baseNs;
            firstRow = head.firstRow;
            // HTA rounds a file whose timestamps have a fraction of a microsecond.
            auto fractional = [&](const std::vector<TimeNs>& v) {
                return std::any_of(v.begin(), v.end(), [&](TimeNs t) { return (t + clock.toTrace) % 1000 != 0; });
            };
            bool any = fractional(p.apiCalls.start) || fractional(p.ranges.start) || fractional(p.cpuOps.start);
            for (const auto& d : p.devices)
                any = any || fractional(d.kernels.start) || fractional(d.copies.start) || fractional(d.memsets.start) ||
                      fractional(d.syncs.start);
            clock.round = options.roundToMicroseconds && any;
        }

        HtaRank r;
        r.rank = p.rank >= 0 ? p.rank : 0;
        std::optional<size_t> byPlace;
        if (p.rank < 0 && !kineto) byPlace = pi;
        if (const auto given = options.rankOfFile.find(p.sourcePath); given != options.rankOfFile.end()) {
            r.rank = given->second;
            byPlace.reset();
        }
        r.path = p.sourcePath;

        // Every row of the file, rounded, before HTA filters: the host rows,
        // the ProfilerStep windows, the job's first time (HTA aligns ranks on
        // it before filtering) and the integer columns' ranges.
        struct Host {
            TimeNs start, end;
            uint32_t name, correlation;
            uint64_t thread;
            HtaHostKind kind;
        };
        std::vector<Host> hosts;
        hosts.reserve(p.apiCalls.size() + p.ranges.size() + p.cpuOps.size());
        std::vector<size_t> hostRuns{0};
        const auto& calls = p.apiCalls;
        std::vector<uint32_t> callNameOf(strings.size(), kNoId);  // by string id: withoutVersion once per name
        for (size_t i = 0; i < calls.size(); ++i) {
            const auto [s, e] = clock.event(calls.start[i], calls.end[i]);
            const uint32_t stringId = calls.name[i];
            uint32_t name = stringId < callNameOf.size() ? callNameOf[stringId] : kNoId;
            if (name == kNoId) {
                name = nameId(withoutVersion(strings.at(stringId)));
                if (stringId < callNameOf.size()) callNameOf[stringId] = name;
            }
            hosts.push_back({s, e, name, calls.correlation[i], calls.globalTid[i],
                             calls.kind[i] == ApiKind::Driver ? HtaHostKind::Driver : HtaHostKind::Runtime});
        }
        hostRuns.push_back(hosts.size());
        for (size_t i = 0; i < p.ranges.size(); ++i) {
            const auto [s, e] = clock.event(p.ranges.start[i], p.ranges.end[i]);
            hosts.push_back({s, e, nameId(strings, p.ranges.name[i]), 0, p.ranges.globalTid[i],
                             p.ranges.onGpu[i] ? HtaHostKind::GpuUserAnnotation : HtaHostKind::UserAnnotation});
        }
        hostRuns.push_back(hosts.size());
        for (size_t i = 0; i < p.cpuOps.size(); ++i) {
            const auto [s, e] = clock.event(p.cpuOps.start[i], p.cpuOps.end[i]);
            hosts.push_back({s, e, nameId(strings, p.cpuOps.name[i]), 0, p.cpuOps.globalTid[i], HtaHostKind::CpuOp});
        }
        hostRuns.push_back(hosts.size());
        stableSortRuns(hosts, hostRuns, [](const Host& a, const Host& b) { return a.start < b.start; });

        StepWindows steps;
        for (int gpuSide = 0; gpuSide < 2; ++gpuSide)
            for (const auto& h : hosts) {
                const bool onGpu = h.kind == HtaHostKind::GpuUserAnnotation;
                if (onGpu != (gpuSide == 1) || (h.kind != HtaHostKind::UserAnnotation && !onGpu)) continue;
                if (const auto n = stepNumber(names.names[h.name])) steps.add(h.start, h.end, *n);
            }
        steps.finish();

        int64_t maxCorrelation = -1;
        std::vector<uint32_t> hostCorrelations;
        for (const auto& h : hosts)
            if (h.correlation != 0) hostCorrelations.push_back(h.correlation);
        CorrelationMap<std::pair<TimeNs, int>> launchOf(hostCorrelations);  // -> (start, iteration)
        for (const auto& h : hosts) {
            origin = std::min(origin, h.start);
            maxCorrelation = std::max<int64_t>(maxCorrelation, h.correlation);
            if (h.correlation != 0) launchOf.set(h.correlation, {h.start, steps.at(h.start)});
        }

        bool keepAllGpu = true;
        TimeNs cutoff = 0;
        bool cutoffInclusive = false;
        if (filter && !hosts.empty()) {
            keepAllGpu = false;
            std::optional<TimeNs> lastStart, lastEnd;
            TimeNs firstHost = INT64_MAX, lastHost = INT64_MIN;
            for (const auto& h : hosts) {
                firstHost = std::min(firstHost, h.start);
                lastHost = std::max(lastHost, h.end);
                const bool annotation =
                    h.kind == HtaHostKind::UserAnnotation || h.kind == HtaHostKind::GpuUserAnnotation;
                if (!annotation || !isProfilerStep(names.names[h.name])) continue;
                lastStart = lastStart ? std::max(*lastStart, h.start) : h.start;
                lastEnd = lastEnd ? std::max(*lastEnd, h.end) : h.end;
            }
            cutoffInclusive = options.includeLastProfilerStep;
            cutoff = options.includeLastProfilerStep ? lastEnd.value_or(lastHost) : lastStart.value_or(firstHost);
        }
        auto keptHost = [&](TimeNs s) { return keepAllGpu || (cutoffInclusive ? s <= cutoff : s < cutoff); };
        CorrelationMap<bool> keptCorrelations(hostCorrelations);
        for (auto* column : {&r.hostStart, &r.hostEnd}) column->reserve(hosts.size());
        for (auto* column : {&r.hostName, &r.hostCorrelation}) column->reserve(hosts.size());
        r.hostThread.reserve(hosts.size());
        r.hostKind.reserve(hosts.size());
        r.hostIteration.reserve(hosts.size());
        for (const auto& h : hosts) {
            if (!keptHost(h.start)) continue;
            r.hostStart.push_back(h.start);
            r.hostEnd.push_back(h.end);
            r.hostName.push_back(h.name);
            r.hostCorrelation.push_back(h.correlation);
            r.hostThread.push_back(h.thread);
            r.hostKind.push_back(h.kind);
            r.hostIteration.push_back(steps.at(h.start));
            if (h.correlation != 0) keptCorrelations.set(h.correlation, true);
        }
        // HTA's row 0, the time a kernel without its launch is joined to.
        std::optional<TimeNs> firstRowStart;
        if (firstRow) {
            const TimeNs t = clock.start(firstRow->tsNs - clock.toTrace);  // onto the trace's clock, rounded
            const bool kept = keepAllGpu || (firstRow->gpu ? keptCorrelations.contains(static_cast<uint32_t>(
                                                                 std::max<int64_t>(firstRow->correlation, 0)))
                                                           : keptHost(t));
            if (kept) firstRowStart = t;
        }

        struct Event {
            TimeNs start, end;
            uint32_t stream, correlation, name, device;
            HtaEventKind kind;
            int64_t bytes;
            double bandwidth;
        };
        std::vector<Event> events;
        {
            size_t rows = 0;
            for (const auto& d : p.devices)
                rows += d.kernels.size() + d.copies.size() + d.memsets.size() + d.syncs.size();
            events.reserve(rows);
        }
        std::vector<size_t> eventRuns{0};
        int64_t maxStream = -1;
        auto add = [&](TimeNs s, TimeNs e, uint32_t stream, uint32_t correlation, uint32_t name, uint32_t device,
                       HtaEventKind kind, int64_t bytes) {
            maxStream = std::max<int64_t>(maxStream, stream);
            maxCorrelation = std::max<int64_t>(maxCorrelation, correlation);
            const auto [rs, re] = clock.event(s, e);
            origin = std::min(origin, rs);
            if (!keepAllGpu && (correlation == 0 || !keptCorrelations.contains(correlation))) return;
            // Kineto: bytes / duration in ns, on the duration CUPTI measured.
            const double bandwidth =
                bytes >= 0 && e > s ? static_cast<double>(bytes) / static_cast<double>(e - s) : 0.0;
            events.push_back({rs, re, stream, correlation, name, device, kind, bytes, bandwidth});
        };
        std::map<std::tuple<CopyKind, MemKind, MemKind>, uint32_t> copyNames;
        for (const auto& d : p.devices) {
            const auto& k = d.kernels;
            for (size_t i = 0; i < k.size(); ++i)
                add(k.start[i], k.end[i], k.stream[i], k.correlation[i], nameId(strings, k.name[i]), d.id,
                    HtaEventKind::Kernel, -1);
            eventRuns.push_back(events.size());
            const auto& c = d.copies;
            for (size_t i = 0; i < c.size(); ++i) {
                // Kineto's own spelling, which is how the trace named it.
                const auto kinds = std::tuple(c.copyKind[i], c.srcKind[i], c.dstKind[i]);
                auto [it, fresh] = copyNames.try_emplace(kinds, 0);
                if (fresh)
                    it->second = nameId("Memcpy " + std::string(kineto::copyKindName(c.copyKind[i])) + " (" +
                                        std::string(kineto::memKindName(c.srcKind[i])) + " -> " +
                                        std::string(kineto::memKindName(c.dstKind[i])) + ")");
                add(c.start[i], c.end[i], c.stream[i], c.correlation[i], it->second, d.id, HtaEventKind::Memcpy,
                    static_cast<int64_t>(c.bytes[i]));
            }
            eventRuns.push_back(events.size());
            const auto& m = d.memsets;
            const uint32_t memset = nameId("Memset (Device)");
            for (size_t i = 0; i < m.size(); ++i)
                add(m.start[i], m.end[i], m.stream[i], m.correlation[i], memset, d.id, HtaEventKind::Memset,
                    static_cast<int64_t>(m.bytes[i]));
            eventRuns.push_back(events.size());
            const auto& s = d.syncs;
            for (size_t i = 0; i < s.size(); ++i)
                if (s.stream[i] != kNoId)
                    add(s.start[i], s.end[i], s.stream[i], s.correlation[i], nameId(kineto::syncTypeName(s.type[i])),
                        d.id, HtaEventKind::Sync, -1);
            eventRuns.push_back(events.size());
        }
        r.streamDtype = downcast(-1, maxStream);
        r.correlationDtype = downcast(-1, maxCorrelation);
        stableSortRuns(events, eventRuns, [](const Event& a, const Event& b) { return a.start < b.start; });
        for (auto* column : {&r.start, &r.end}) column->reserve(events.size());
        for (auto* column : {&r.stream, &r.correlation, &r.name, &r.device}) column->reserve(events.size());
        r.kind.reserve(events.size());
        r.type.reserve(events.size());
        r.bytes.reserve(events.size());
        r.bandwidth.reserve(events.size());
        r.launchStart.reserve(events.size());
        r.iteration.reserve(events.size());
        for (const auto& e : events) {
            r.start.push_back(e.start);
            r.end.push_back(e.end);
            r.stream.push_back(e.stream);
            r.correlation.push_back(e.correlation);
            r.name.push_back(e.name);
            r.device.push_back(e.device);
            r.kind.push_back(e.kind);
            r.type.push_back(typeOf(e.name));
            r.bytes.push_back(e.bytes);
            r.bandwidth.push_back(e.bandwidth);
            const auto* launch = e.correlation != 0 ? launchOf.find(e.correlation) : nullptr;
            if (launch) {
                r.launchStart.push_back(launch->first);
                r.iteration.push_back(launch->second);
            } else {
                r.launchStart.push_back(e.correlation != 0 ? firstRowStart : std::nullopt);
                r.iteration.push_back(-1);
            }
        }
        r.unions = htaUnionsOf(r);
        view.ranks.push_back(std::move(r));
        view.numberedByPlace.push_back(byPlace);
    }
    return view;
}

HtaTrace::HtaTrace(std::vector<HtaCaptureView> views, const HtaOptions& options) : options_(options) {
    std::map<int, HtaRank> byRank;
    std::map<int, std::string> fileOfRank;
    std::unordered_map<std::string, uint32_t> ids;
    TimeNs origin = INT64_MAX;
    size_t processIndex = 0;  // over all captures: the rank of a process that names none
    for (auto& view : views) {
        // The view's names joined to the job's, in the order the job's first
        // used them (the same order one view of all captures would give).
        std::vector<uint32_t> id(view.names.names.size());
        for (size_t i = 0; i < id.size(); ++i) {
            auto [it, added] = ids.try_emplace(view.names.names[i], static_cast<uint32_t>(names_.size()));
            if (added) names_.push_back(view.names.names[i]);
            id[i] = it->second;
        }
        origin = std::min(origin, view.origin);
        for (size_t k = 0; k < view.ranks.size(); ++k) {
            HtaRank& r = view.ranks[k];
            for (auto& n : r.name) n = id[n];
            for (auto& n : r.hostName) n = id[n];
            if (view.numberedByPlace[k]) r.rank = static_cast<int>(processIndex + *view.numberedByPlace[k]);
            if (const auto seen = fileOfRank.find(r.rank); seen != fileOfRank.end())
                warnings_.push_back("rank " + std::to_string(r.rank) + " is in both " + seen->second + " and " +
                                    r.path + "; like HTA, only the latter is analysed");
            fileOfRank[r.rank] = r.path;
            byRank[r.rank] = std::move(r);
        }
        processIndex += view.processes;
    }
    origin_ = origin == INT64_MAX ? 0 : origin;
    for (auto& [rank, data] : byRank) ranks_.push_back(std::move(data));
}

double HtaTrace::traceOffsetUs(int rank) const {
    rankData(rank);  // a rank that is not here throws
    return options_.roundToMicroseconds ? static_cast<double>(origin_ / 1000) : static_cast<double>(origin_) / 1000.0;
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

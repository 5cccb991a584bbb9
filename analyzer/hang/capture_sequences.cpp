// A loaded capture's collectives per rank and communicator. A hung job's
// capture is mostly what is missing: the kernel of a collective that never
// ended has no record (CUPTI reports kernels once they end), and a capture
// of a killed job stops at its last commit. So three kinds of evidence are
// read: plugin rows (the agent writes a collective still running when the
// capture stops with no GPU end), kernels (one that never ended may also be
// stored open, its end before its start), and launch calls whose GPU work
// never came, typed by NCCL's own NVTX range around them.
#include "analyzer/capture/api_call_names.h"
#include "analyzer/hang/group_sequences.h"
#include "analyzer/hang/host_activity.h"
#include "analyzer/hang/rank_sequences.h"
#include "analyzer/metrics/classify.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace osc::hang {
namespace {

constexpr const char* kKernelOrderId = "kernel order";

bool isPointToPoint(std::string_view func) { return func == "Send" || func == "Recv" || func == "SendRecv"; }

std::string hex(uint64_t v) {
    char out[24];
    std::snprintf(out, sizeof out, "0x%016llx", static_cast<unsigned long long>(v));
    return out;
}

// NCCL's NVTX ranges are named after its API call: ncclAllReduce, ncclSend...
std::string collectiveOfNcclRange(std::string_view name) {
    static const std::unordered_set<std::string_view> known = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                                               "Reduce",    "AllToAll",  "Gather",        "Scatter"};
    if (!name.starts_with("nccl")) return {};
    const std::string_view rest = name.substr(4);
    return known.count(rest) ? std::string(rest) : std::string();
}

struct TypedLaunch {
    std::string collective;
    TimeNs start = 0;
};

// Launch calls of the process whose correlation id no GPU record carries,
// and those of them inside an NCCL API range on the same thread.
struct Unfinished {
    uint64_t count = 0;
    std::optional<TimeNs> first;
    std::vector<TypedLaunch> nccl;  // in start order
};

Unfinished unfinishedLaunches(const Capture& capture, const Process& p) {
    std::unordered_set<uint32_t> ran;
    for (const Device& d : p.devices) {
        for (size_t i = 0; i < d.kernels.size(); ++i)
            if (d.kernels.end[i] >= d.kernels.start[i]) ran.insert(d.kernels.correlation[i]);
        ran.insert(d.copies.correlation.begin(), d.copies.correlation.end());
        ran.insert(d.memsets.correlation.begin(), d.memsets.correlation.end());
    }
    // NCCL ranges per thread, for the launches inside them.
    std::unordered_map<uint64_t, std::vector<size_t>> ncclRanges;
    for (size_t i = 0; i < p.ranges.size(); ++i)
        if (p.ranges.kind[i] != RangeKind::Mark && !collectiveOfNcclRange(capture.strings.at(p.ranges.name[i])).empty())
            ncclRanges[p.ranges.globalTid[i]].push_back(i);
    Unfinished out;
    const ApiCallTable& a = p.apiCalls;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a.returnValue[i] != 0 || ran.count(a.correlation[i]) || !launchesGpuWork(capture.strings.at(a.name[i])))
            continue;
        ++out.count;
        if (!out.first || a.start[i] < *out.first) out.first = a.start[i];
        const auto it = ncclRanges.find(a.globalTid[i]);
        if (it == ncclRanges.end()) continue;
        for (size_t r : it->second)
            if (p.ranges.start[r] <= a.start[i] && a.start[i] <= p.ranges.end[r]) {
                out.nccl.push_back({collectiveOfNcclRange(capture.strings.at(p.ranges.name[r])), a.start[i]});
                break;
            }
    }
    std::sort(out.nccl.begin(), out.nccl.end(), [](const auto& x, const auto& y) { return x.start < y.start; });
    return out;
}

RankProgress rankOf(const Process& p, const HostActivity& host, const Unfinished& unfinished) {
    RankProgress r;
    r.rank = p.rank;
    r.label = p.label();
    r.source = p.sourcePath;
    r.host = host;
    r.unfinishedLaunches = unfinished.count;
    r.firstUnfinishedLaunchNs = unfinished.first;
    return r;
}

// A typed unfinished launch after the rank's last call of that type is the
// next call of that type, entered and never completed. Without an earlier
// call of its type it is number `firstSeq` (kernel order counts from the
// capture's start) or cannot be numbered (NCCL counts from the
// communicator's creation, before the capture).
void addUnfinishedCalls(std::vector<Call>& calls, const std::vector<TypedLaunch>& launches,
                        std::optional<uint64_t> firstSeq, Evidence evidence = Evidence::UnfinishedLaunch) {
    for (const TypedLaunch& l : launches) {
        std::optional<uint64_t> next;
        TimeNs lastEntered = std::numeric_limits<TimeNs>::min();
        for (const Call& c : calls)
            if (c.collective == l.collective) {
                next = std::max(next.value_or(0), c.slot.seq + 1);
                lastEntered = std::max(lastEntered, c.enteredNs);
            }
        if (!next) next = firstSeq;
        if (!next) continue;                   // no number to give it
        if (l.start <= lastEntered) continue;  // the launch of a call already there
        Call c;
        c.slot = {l.collective, *next};
        c.collective = l.collective;
        c.enteredNs = l.start;
        if (evidence == Evidence::Kernel) c.gpuStartNs = l.start;
        c.evidence = evidence;
        calls.push_back(std::move(c));
    }
}

TimeNs enteredTime(const CollectiveTable& t, size_t i) { return t.enqueue[i] >= 0 ? t.enqueue[i] : t.gpuStart[i]; }

// The plugin writes a collective's row once NCCL reports it finished (or,
// still open, when the capture closes). A process that died first, such as
// one PyTorch's watchdog aborted, leaves the kernel of its hung collective
// (ended by the abort) without a row. Of each type, kernels beyond the
// process's rows that start after its newest row was entered are such
// calls: entered, and never finished as far as NCCL said.
std::vector<TypedLaunch> unreportedKernels(const Capture& capture, const Process& p) {
    const CollectiveTable& t = p.collectives;
    std::map<std::string, std::pair<size_t, TimeNs>> rows;  // type -> (rows, newest entered)
    for (size_t i = 0; i < t.size(); ++i) {
        if (t.commHash[i] == 0) continue;
        auto& [count, newest] =
            rows.try_emplace(std::string(capture.strings.at(t.func[i])), 0, std::numeric_limits<TimeNs>::min())
                .first->second;
        ++count;
        newest = std::max(newest, enteredTime(t, i));
    }
    std::map<std::string, std::vector<TimeNs>> kernels;  // type -> starts
    for (const Device& d : p.devices)
        for (size_t i = 0; i < d.kernels.size(); ++i) {
            const NcclKernelName n = parseNcclKernelName(capture.strings.at(d.kernels.name[i]));
            if (n.isNccl && !n.collective.empty() && !isPointToPoint(n.collective))
                kernels[n.collective].push_back(d.kernels.start[i]);
        }
    std::vector<TypedLaunch> out;
    for (auto& [type, starts] : kernels) {
        const auto r = rows.find(type);
        if (r == rows.end() || starts.size() <= r->second.first) continue;
        std::sort(starts.begin(), starts.end());
        for (size_t i = r->second.first; i < starts.size(); ++i)
            if (starts[i] > r->second.second) out.push_back({type, starts[i]});
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.start < y.start; });
    return out;
}

// One process's plugin communicators, appended to `comms` (found by id).
void addPluginCalls(const Capture& capture, const Process& p, const HostActivity& host, const Unfinished& unfinished,
                    std::map<std::string, CommunicatorProgress>& comms) {
    const CollectiveTable& t = p.collectives;
    std::map<uint64_t, std::vector<size_t>> rowsOf;
    for (size_t i = 0; i < t.size(); ++i)
        if (t.commHash[i] != 0 && !isPointToPoint(capture.strings.at(t.func[i]))) rowsOf[t.commHash[i]].push_back(i);
    for (auto& [hash, rows] : rowsOf) {
        std::stable_sort(rows.begin(), rows.end(), [&](size_t x, size_t y) {
            return std::pair(enteredTime(t, x), t.seqNumber[x]) < std::pair(enteredTime(t, y), t.seqNumber[y]);
        });
        CommunicatorProgress& comm = comms[hex(hash)];
        comm.id = hex(hash);
        comm.source = Source::NcclPlugin;
        comm.seqPerCollective = true;
        RankProgress rank = rankOf(p, host, unfinished);
        // Every rank's calls are held at once (1,024 ranks: half a million):
        // no growth slack beyond the one unfinished call added later.
        rank.calls.reserve(rows.size() + 1);
        std::set<SlotKey> seen;
        for (size_t i : rows) {
            Call c;
            c.collective = std::string(capture.strings.at(t.func[i]));
            c.slot = {c.collective, t.seqNumber[i]};
            if (!seen.insert(c.slot).second) continue;  // a row written twice
            c.dtype = std::string(capture.strings.at(t.datatype[i]));
            if (t.bytes[i] > 0) c.bytes = t.bytes[i];
            c.enteredNs = enteredTime(t, i);
            c.completed = t.gpuEnd[i] >= 0;
            if (c.completed) c.completedNs = t.gpuEnd[i];
            if (t.gpuStart[i] >= 0) c.gpuStartNs = t.gpuStart[i];
            c.evidence = Evidence::PluginRow;
            rank.commRank = std::max(rank.commRank, t.rank[i]);
            comm.size = std::max(comm.size, t.nranks[i]);
            rank.calls.push_back(std::move(c));
        }
        comm.ranks.push_back(std::move(rank));
    }
    // NCCL's ranges and kernels name no communicator: a typed launch or
    // kernel goes to the one whose newest call of that type is the latest
    // before it.
    const auto ownerOf = [&](const TypedLaunch& l) -> RankProgress* {
        RankProgress* best = nullptr;
        TimeNs bestAt = std::numeric_limits<TimeNs>::min();
        for (auto& [hash, rows] : rowsOf) {
            RankProgress& r = comms[hex(hash)].ranks.back();
            for (const Call& c : r.calls)
                if (c.collective == l.collective && c.enteredNs <= l.start && c.enteredNs >= bestAt) {
                    best = &r;
                    bestAt = c.enteredNs;
                }
        }
        return best;
    };
    for (const TypedLaunch& l : unfinished.nccl)
        if (RankProgress* owner = ownerOf(l)) addUnfinishedCalls(owner->calls, {l}, std::nullopt);
    // An unreported kernel after the rank's last call of its type is that
    // type's next call, entered and not finished.
    for (const TypedLaunch& k : unreportedKernels(capture, p))
        if (RankProgress* owner = ownerOf(k)) addUnfinishedCalls(owner->calls, {k}, std::nullopt, Evidence::Kernel);
}

// Collective kernels of one device in start order, numbered per type.
RankProgress kernelOrderRank(const Capture& capture, const Process& p, const Device& d, const HostActivity& host,
                             const Unfinished& unfinished, std::unordered_map<uint32_t, NcclKernelName>& names) {
    RankProgress rank = rankOf(p, host, unfinished);
    if (p.devices.size() > 1) rank.label += " gpu " + std::to_string(d.id);
    // PyTorch's collective arguments became rows on the kernel's own times.
    std::map<TimeNs, size_t> argsAt;
    const CollectiveTable& t = p.collectives;
    for (size_t i = 0; i < t.size(); ++i)
        if (t.commHash[i] == 0 && (t.device[i] == d.id || t.device[i] == kNoId)) argsAt.emplace(t.gpuStart[i], i);
    std::map<std::string, uint64_t> ordinal;
    const KernelTable& k = d.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        auto it = names.find(k.name[i]);
        if (it == names.end()) it = names.emplace(k.name[i], parseNcclKernelName(capture.strings.at(k.name[i]))).first;
        const NcclKernelName& n = it->second;
        if (!n.isNccl || n.collective.empty() || isPointToPoint(n.collective)) continue;
        Call c;
        c.collective = n.collective;
        c.slot = {n.collective, ordinal[n.collective]++};
        c.dtype = n.datatype;
        if (const auto a = argsAt.find(k.start[i]); a != argsAt.end()) {
            if (t.bytes[a->second] > 0) c.bytes = t.bytes[a->second];
            if (c.dtype.empty()) c.dtype = std::string(capture.strings.at(t.datatype[a->second]));
        }
        c.enteredNs = k.start[i];
        c.gpuStartNs = k.start[i];
        c.completed = k.end[i] >= k.start[i];
        if (c.completed) c.completedNs = k.end[i];
        c.evidence = Evidence::Kernel;
        rank.calls.push_back(std::move(c));
    }
    // A device of a one-GPU process takes the process's NCCL launches.
    if (p.devices.size() == 1) addUnfinishedCalls(rank.calls, unfinished.nccl, 0);
    return rank;
}

// A rank stuck since before its first collective in the capture wrote no
// plugin row, so no communicator lists it. Where a communicator's members
// all have their global rank as their rank in it (the world communicator),
// the process of a missing member's rank is that member, with no calls.
bool joinByRank(const Process& p, const HostActivity& host, const Unfinished& unfinished,
                std::map<std::string, CommunicatorProgress>& comms) {
    if (p.rank < 0) return false;
    bool joined = false;
    for (auto& [id, comm] : comms) {
        if (p.rank >= comm.size) continue;
        const bool identity = std::all_of(comm.ranks.begin(), comm.ranks.end(),
                                          [](const RankProgress& r) { return r.rank == r.commRank; });
        const bool present = std::any_of(comm.ranks.begin(), comm.ranks.end(),
                                         [&](const RankProgress& r) { return r.commRank == p.rank; });
        if (!identity || present) continue;
        RankProgress r = rankOf(p, host, unfinished);
        r.commRank = p.rank;
        comm.ranks.push_back(std::move(r));
        joined = true;
    }
    return joined;
}

bool hasCollectiveKernels(const Capture& capture, const Process& p) {
    for (const Device& d : p.devices)
        for (size_t i = 0; i < d.kernels.size(); ++i) {
            const NcclKernelName n = parseNcclKernelName(capture.strings.at(d.kernels.name[i]));
            if (n.isNccl && !n.collective.empty() && !isPointToPoint(n.collective)) return true;
        }
    return false;
}

TimeNs lastRecordOf(const Process& p) {
    TimeNs last = std::numeric_limits<TimeNs>::min();
    const auto take = [&](const std::vector<TimeNs>& v) {
        for (TimeNs t : v) last = std::max(last, t);
    };
    for (const Device& d : p.devices) {
        take(d.kernels.start);
        take(d.kernels.end);
        take(d.copies.end);
        take(d.memsets.end);
        take(d.syncs.end);
    }
    take(p.apiCalls.end);
    take(p.ranges.end);
    take(p.cpuOps.end);
    take(p.collectives.enqueue);
    take(p.collectives.gpuStart);
    take(p.collectives.gpuEnd);
    return last;
}

// A capture stopped by request says when (OVERLAPSCOPE_META); one that was
// killed ends at its last record. A stop time a day past the last record is
// no stop of this capture (a file written by something else) and is ignored.
TimeNs captureEnd(const Capture& capture) {
    TimeNs end = std::numeric_limits<TimeNs>::min();
    for (const Process& p : capture.processes) {
        const TimeNs last = lastRecordOf(p);
        end = std::max(end, last);
        const auto it = p.meta.find("capture_stop_utc_ns");
        if (it == p.meta.end()) continue;
        try {
            const TimeNs stop = std::stoll(it->second) - capture.originUtcNs;
            constexpr TimeNs kDay = 86'400'000'000'000;
            if (stop >= last && stop - last <= kDay) end = std::max(end, stop);
        } catch (const std::exception&) {}
    }
    return end == std::numeric_limits<TimeNs>::min() ? 0 : end;
}

}  // namespace

JobSequences sequencesFromCapture(const Capture& capture) {
    JobSequences job;
    job.inputs = capture.sourcePaths;
    job.originUtcNs = capture.originUtcNs;
    job.endNs = captureEnd(capture);
    job.endKnown = !capture.processes.empty();
    std::map<std::string, CommunicatorProgress> plugin, groups;
    CommunicatorProgress order;
    order.id = kKernelOrderId;
    order.source = Source::KernelOrder;
    order.seqPerCollective = true;
    std::unordered_map<uint32_t, NcclKernelName> names;
    std::vector<const Process*> withoutRows;
    for (const Process& p : capture.processes) {
        if (p.rank >= 0) job.inputRanks.push_back(p.rank);
        bool hasPluginRows = false;
        for (size_t i = 0; i < p.collectives.size() && !hasPluginRows; ++i)
            hasPluginRows =
                p.collectives.commHash[i] != 0 && !isPointToPoint(capture.strings.at(p.collectives.func[i]));
        if (!p.groupCalls.empty()) {
            // PyTorch's Seq names a call alike on every member, wherever each
            // rank's trace begins: kernel order would not. Its collective rows
            // may carry the same numbers (numberCollectivesBySeq), but only
            // the group calls know the launches whose kernel never came.
            const Unfinished unfinished = unfinishedLaunches(capture, p);
            addGroupCalls(capture, p, rankOf(p, hostActivityOf(capture, p), unfinished), groups);
        } else if (hasPluginRows) {
            addPluginCalls(capture, p, hostActivityOf(capture, p), unfinishedLaunches(capture, p), plugin);
        } else {
            withoutRows.push_back(&p);
        }
    }
    for (const Process* p : withoutRows) {
        const HostActivity host = hostActivityOf(capture, *p);
        const Unfinished unfinished = unfinishedLaunches(capture, *p);
        const bool joined = joinByRank(*p, host, unfinished, plugin) | joinByRank(*p, host, unfinished, groups);
        if (joined && !hasCollectiveKernels(capture, *p)) continue;
        for (const Device& d : p->devices)
            order.ranks.push_back(kernelOrderRank(capture, *p, d, host, unfinished, names));
    }
    std::sort(job.inputRanks.begin(), job.inputRanks.end());
    job.inputRanks.erase(std::unique(job.inputRanks.begin(), job.inputRanks.end()), job.inputRanks.end());
    for (auto& [id, comm] : plugin) job.communicators.push_back(std::move(comm));
    for (auto& [id, comm] : groups) job.communicators.push_back(std::move(comm));
    if (!order.ranks.empty()) {
        // Kernel order knows no rank in a communicator: a rank's place is its order here.
        order.size = static_cast<int>(order.ranks.size());
        for (size_t i = 0; i < order.ranks.size(); ++i) order.ranks[i].commRank = static_cast<int>(i);
        job.communicators.push_back(std::move(order));
    }
    for (auto& comm : job.communicators) {
        for (auto& r : comm.ranks) {
            std::stable_sort(r.calls.begin(), r.calls.end(),
                             [](const Call& a, const Call& b) { return a.enteredNs < b.enteredNs; });
            // One communicator's kernels run in order; kernel order mixes
            // communicators, whose kernels say for themselves whether they ended.
            if (comm.source != Source::KernelOrder) completeInOrder(r.calls);
        }
        std::stable_sort(comm.ranks.begin(), comm.ranks.end(), [](const RankProgress& a, const RankProgress& b) {
            return std::pair(a.commRank, a.rank) < std::pair(b.commRank, b.rank);
        });
    }
    return job;
}

void completeInOrder(std::vector<Call>& calls) {
    bool later = false;
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
        if (later) it->completed = true;
        later = later || it->completed;
    }
}

std::string toString(Source source) {
    switch (source) {
        case Source::NcclPlugin:
            return "nccl-plugin";
        case Source::FlightRecorder:
            return "flight-recorder";
        case Source::PyTorchSeq:
            return "pytorch-seq";
        case Source::PyTorchGroupOrder:
            return "pytorch-group-order";
        case Source::KernelOrder:
            return "kernel-order";
    }
    return "unknown";
}

std::string toString(Evidence evidence) {
    switch (evidence) {
        case Evidence::PluginRow:
            return "plugin-row";
        case Evidence::Kernel:
            return "kernel";
        case Evidence::UnfinishedLaunch:
            return "unfinished-launch";
        case Evidence::FlightRecorder:
            return "flight-recorder";
        case Evidence::Operator:
            return "operator";
        case Evidence::StatusTable:
            return "pg-status";
    }
    return "unknown";
}

}  // namespace osc::hang

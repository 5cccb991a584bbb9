#include "analyzer/import/kineto_group_calls.h"

#include "analyzer/import/kineto_comm_args.h"
#include "analyzer/import/kineto_launches.h"
#include "analyzer/import/kineto_names.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace osc::kineto {
namespace {

struct KernelSpan {
    uint32_t device = kNoId;
    TimeNs start = 0, end = 0;
};

uint64_t bytesOf(const CommArgs& a, std::string_view func) {
    const int64_t n = ncclElementsOf(a, func);
    const int elem = dtypeBytes(a.dtype);
    return n < 0 || elem == 0 ? 0 : static_cast<uint64_t>(n) * static_cast<uint64_t>(elem);
}

}  // namespace

bool namesGroupCollective(const CommArgs& a) {
    return !a.collective.empty() && !groupOf(a).empty() && !isSendOrRecv(a);
}

namespace {

// The records that stand for calls, each with its Seq: as read where any
// record has one (those without are other records of the same calls, or
// none PyTorch numbered); else numbered per group in start order, from the
// operators (an operator nested in one of the same group on its thread is
// the same call) or, where the trace has none, from the kernels.
std::vector<PendingGroupCall> numberedCalls(const std::vector<PendingGroupCall>& pending, bool& fromOrder) {
    std::vector<PendingGroupCall> out;
    fromOrder = std::none_of(pending.begin(), pending.end(), [](const auto& r) { return r.args.seq != kAbsent; });
    if (!fromOrder) {
        for (const auto& r : pending)
            if (r.args.seq != kAbsent) out.push_back(r);
        return out;
    }
    const bool operators = std::any_of(pending.begin(), pending.end(), [](const auto& r) { return r.device == kNoId; });
    for (const auto& r : pending)
        if ((r.device == kNoId) == operators) out.push_back(r);
    std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
        return std::pair(x.start, -x.end) < std::pair(y.start, -y.end);
    });
    std::map<std::string, int64_t> next;                           // per group
    std::map<std::pair<uint64_t, std::string>, TimeNs> openUntil;  // (thread, group) -> the last call's end
    std::vector<PendingGroupCall> calls;
    for (auto& r : out) {
        const std::string group = groupOf(r.args);
        if (operators) {
            auto [it, fresh] = openUntil.try_emplace({r.globalTid, group}, r.end);
            if (!fresh && r.start <= it->second && r.end <= it->second) continue;  // nested in the last call
            it->second = r.end;
        }
        r.args.seq = next[group]++;
        calls.push_back(std::move(r));
    }
    return calls;
}

}  // namespace

void appendGroupCalls(Process& p, StringTable& strings, const std::vector<PendingGroupCall>& all, int processRank) {
    bool fromOrder = false;
    const std::vector<PendingGroupCall> pending = numberedCalls(all, fromOrder);
    if (pending.empty()) return;
    const LaunchIndex launches(p, strings);

    std::map<std::pair<std::string, uint64_t>, GroupCall> calls;
    std::set<std::pair<std::string, uint64_t>> sized;  // calls whose arguments give a collective row
    for (const PendingGroupCall& r : pending) {
        std::optional<KernelSpan> kernel;
        if (r.device != kNoId) {
            kernel = KernelSpan{r.device, r.start, r.end};
        } else if (const auto* k =
                       launches.firstKernel(r.globalTid, r.start, r.end, [](const auto&) { return true; })) {
            kernel = KernelSpan{k->device, k->start, k->end};
        }
        const CommArgs& args = r.args;
        const auto key = std::pair(groupOf(args), static_cast<uint64_t>(args.seq));
        const auto [it, added] = calls.try_emplace(key);
        GroupCall& c = it->second;
        if (added) {
            const std::string_view func = ncclFuncOfCollective(args.collective);
            c.group = strings.intern(key.first);
            c.seq = key.second;
            c.seqFromOrder = fromOrder;
            c.collective = strings.intern(func.empty() ? std::string_view(args.collective) : func);
            c.dtype = strings.intern(args.dtype);
            c.bytes = bytesOf(args, func);
            const GroupMembers members = groupMembersOf(args);
            c.groupSize = static_cast<int32_t>(std::min<int64_t>(members.size, INT32_MAX));
            if (processRank >= 0 && (members.listed || args.groupRanks.empty()))
                c.groupRank =
                    static_cast<int32_t>(groupRankOf(members.ranks, members.truncated, members.size, processRank));
            c.entered = r.start;
            if (!func.empty() && c.bytes > 0 && !describesSendsOrReceives(args)) sized.insert(key);
        }
        c.entered = std::min(c.entered, r.start);
        if (kernel && !c.gpuStart) {
            c.device = kernel->device;
            c.gpuStart = kernel->start;
            c.gpuEnd = kernel->end;
        }
    }
    p.groupCalls.reserve(p.groupCalls.size() + calls.size());
    for (auto& [key, c] : calls) p.groupCalls.push_back(c);
    // Traces whose kernels carry no arguments (only the operator does): the
    // operator's size on its kernel, as the kernel's own arguments would give.
    std::set<std::pair<uint32_t, TimeNs>> rowAt;
    for (size_t r = 0; r < p.collectives.size(); ++r) rowAt.emplace(p.collectives.device[r], p.collectives.gpuStart[r]);
    for (const auto& key : sized) {
        const GroupCall& g = calls.at(key);
        if (!g.gpuStart || !rowAt.emplace(g.device, *g.gpuStart).second) continue;
        appendArgsRow(p.collectives, strings, g.collective, g.dtype,
                      g.bytes / static_cast<uint64_t>(dtypeBytes(strings.at(g.dtype))), g.bytes,
                      static_cast<int32_t>(std::max(processRank, -1)), g.groupSize, g.device, *g.gpuStart,
                      g.gpuEnd.value_or(*g.gpuStart));
    }
}

namespace {

bool isCollectiveKernel(std::string_view name) {
    return isNcclKernel(name) && name.find("SendRecv") == std::string_view::npos;
}

// The group call whose kernel is row `r`'s (rows made from kernel arguments
// carry the kernel's own device and times), per kineto row; null where none.
std::vector<const GroupCall*> callsOfRows(const Process& p) {
    std::map<std::pair<uint32_t, TimeNs>, const GroupCall*> byKernel;
    for (const GroupCall& g : p.groupCalls)
        if (g.gpuStart) byKernel.emplace(std::pair(g.device, *g.gpuStart), &g);
    const CollectiveTable& t = p.collectives;
    std::vector<const GroupCall*> out(t.size(), nullptr);
    for (size_t r = 0; r < t.size(); ++r)
        if (t.commHash[r] == 0)
            if (const auto it = byKernel.find({t.device[r], t.gpuStart[r]}); it != byKernel.end()) out[r] = it->second;
    return out;
}

}  // namespace

void numberCollectivesBySeq(Capture& capture, size_t firstProcess) {
    std::vector<std::vector<const GroupCall*>> callsOf(capture.processes.size());
    bool any = false;
    for (size_t i = firstProcess; i < capture.processes.size(); ++i) {
        const Process& p = capture.processes[i];
        const auto format = p.meta.find("source_format");
        if (format == p.meta.end() || format->second != "kineto") continue;
        callsOf[i] = callsOfRows(p);
        size_t rows = 0;
        for (size_t r = 0; r < p.collectives.size(); ++r) {
            if (p.collectives.commHash[r] != 0) continue;
            ++rows;
            if (!callsOf[i][r]) return;
        }
        bool kernels = false;
        for (const Device& d : p.devices)
            for (size_t k = 0; k < d.kernels.size() && !kernels; ++k)
                kernels = isCollectiveKernel(capture.strings.at(d.kernels.name[k]));
        if (kernels && rows == 0) return;
        any = any || rows > 0;
    }
    if (!any) return;
    for (size_t i = firstProcess; i < capture.processes.size(); ++i) {
        CollectiveTable& t = capture.processes[i].collectives;
        for (size_t r = 0; r < callsOf[i].size(); ++r) {
            const GroupCall* g = callsOf[i][r];
            if (!g) continue;
            t.commHash[r] = groupHash(std::string(capture.strings.at(g->group)));
            t.seqNumber[r] = g->seq;
            // Seq orders one group only: the call's time orders the process's
            // rows across groups (whatif pairs rows with kernels by it). Only
            // an operator before the trace's first GPU-side event starts
            // before time 0, which would read as unknown (-1).
            t.enqueue[r] = std::max<TimeNs>(g->entered, 0);
            t.rank[r] = g->groupRank;
            if (g->groupSize > 0) t.nranks[r] = g->groupSize;
        }
    }
}

}  // namespace osc::kineto

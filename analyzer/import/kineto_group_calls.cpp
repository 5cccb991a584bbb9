#include "analyzer/import/kineto_group_calls.h"

#include "analyzer/import/kineto_comm_args.h"
#include "analyzer/import/kineto_names.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <unordered_map>

namespace osc::kineto {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// A group's name identifies it on every rank; old traces without it still
// list its members, which identify it as well.
const std::string& groupOf(const CommArgs& a) { return a.groupName.empty() ? a.groupRanks : a.groupName; }

bool isLaunch(std::string_view api) {
    return api.find("LaunchKernel") != std::string_view::npos ||
           api.find("LaunchCooperativeKernel") != std::string_view::npos ||
           api.find("GraphLaunch") != std::string_view::npos;
}

struct KernelSpan {
    uint32_t device = kNoId;
    TimeNs start = 0, end = 0;
};

uint64_t bytesOf(const CommArgs& a, std::string_view func) {
    // NCCL counts a reduce-scatter by its output, everything else by its input.
    const int64_t n = func == "ReduceScatter" && a.outNelems != kAbsent ? a.outNelems : a.inNelems;
    const int elem = dtypeBytes(a.dtype);
    if (n == kAbsent || elem == 0 || n > (int64_t{1} << 50)) return 0;
    return static_cast<uint64_t>(n) * static_cast<uint64_t>(elem);
}

}  // namespace

bool numbersCollective(const CommArgs& a) {
    if (a.seq == kAbsent || a.collective.empty() || groupOf(a).empty()) return false;
    const std::string n = lower(a.collective);
    return n != "send" && n != "recv";
}

void appendGroupCalls(Process& p, StringTable& strings, const std::vector<PendingGroupCall>& pending, int processRank) {
    if (pending.empty()) return;
    std::unordered_map<uint32_t, KernelSpan> kernelOf;  // by correlation id
    for (const Device& d : p.devices)
        for (size_t i = 0; i < d.kernels.size(); ++i)
            if (d.kernels.correlation[i] != 0)
                kernelOf[d.kernels.correlation[i]] = {d.id, d.kernels.start[i], d.kernels.end[i]};
    std::unordered_map<uint64_t, std::vector<std::pair<TimeNs, uint32_t>>> launchesOf;  // by thread, in start order
    const ApiCallTable& a = p.apiCalls;
    for (size_t i = 0; i < a.size(); ++i)
        if (a.correlation[i] != 0 && isLaunch(strings.at(a.name[i])))
            launchesOf[a.globalTid[i]].emplace_back(a.start[i], a.correlation[i]);
    for (auto& [tid, launches] : launchesOf) std::sort(launches.begin(), launches.end());

    std::map<std::pair<std::string, uint64_t>, GroupCall> calls;
    for (const PendingGroupCall& r : pending) {
        std::optional<KernelSpan> kernel;
        if (r.device != kNoId) {
            kernel = KernelSpan{r.device, r.start, r.end};
        } else if (const auto it = launchesOf.find(r.globalTid); it != launchesOf.end()) {
            auto l = std::lower_bound(it->second.begin(), it->second.end(), std::pair(r.start, uint32_t{0}));
            for (; l != it->second.end() && l->first <= r.end && !kernel; ++l)
                if (const auto k = kernelOf.find(l->second); k != kernelOf.end()) kernel = k->second;
        }
        const CommArgs& args = r.args;
        const auto key = std::pair(groupOf(args), static_cast<uint64_t>(args.seq));
        const auto [it, added] = calls.try_emplace(key);
        GroupCall& c = it->second;
        if (added) {
            const std::string_view func = ncclFuncOfCollective(args.collective);
            c.group = strings.intern(key.first);
            c.seq = key.second;
            c.collective = strings.intern(func.empty() ? std::string_view(args.collective) : func);
            c.dtype = strings.intern(args.dtype);
            c.bytes = bytesOf(args, func);
            bool ok = false, truncated = false;
            const std::vector<int64_t> members = parseIntList(args.groupRanks, ok, &truncated);
            const int64_t size = args.groupSize != kAbsent              ? args.groupSize
                                 : ok && !truncated && !members.empty() ? static_cast<int64_t>(members.size())
                                                                        : -1;
            c.groupSize = static_cast<int32_t>(std::min<int64_t>(size, INT32_MAX));
            if (processRank >= 0 && (ok || args.groupRanks.empty()))
                c.groupRank = static_cast<int32_t>(groupRankOf(members, truncated, size, processRank));
            c.entered = r.start;
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
}

}  // namespace osc::kineto

#include "analyzer/import/kineto_p2p_operators.h"

#include "analyzer/import/kineto_launches.h"
#include "analyzer/import/kineto_names.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string_view>
#include <tuple>

namespace osc::kineto {

std::vector<PendingComm> commsOfOperators(const Process& p, const StringTable& strings,
                                          std::vector<PendingGroupCall> operators,
                                          const std::vector<PendingComm>& fromKernels) {
    std::vector<PendingComm> out;
    if (operators.empty()) return out;
    std::stable_sort(operators.begin(), operators.end(), [](const auto& x, const auto& y) {
        return std::tuple(x.globalTid, x.start, -x.end) < std::tuple(y.globalTid, y.start, -y.end);
    });
    std::set<std::pair<uint32_t, TimeNs>> described;
    for (const PendingComm& c : fromKernels) described.emplace(c.device, c.start);
    const LaunchIndex launches(p, strings);
    const auto ncclKernel = [&](const LaunchIndex::Kernel& k) { return isNcclKernel(strings.at(k.name)); };
    uint64_t thread = 0;
    TimeNs openUntil = std::numeric_limits<TimeNs>::min();
    for (const PendingGroupCall& op : operators) {
        if (op.globalTid == thread && op.end <= openUntil) continue;  // nested: the same call
        thread = op.globalTid;
        openUntil = op.end;
        const auto* k = launches.firstKernel(op.globalTid, op.start, std::numeric_limits<TimeNs>::max(), ncclKernel);
        if (!k || !isPointToPointKernel(strings.at(k->name)) || described.count({k->device, k->start})) continue;
        out.push_back({k->device, k->start, k->end, op.args});
    }
    return out;
}

}  // namespace osc::kineto

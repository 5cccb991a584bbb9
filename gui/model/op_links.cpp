#include "gui/model/op_links.h"

#include <algorithm>

namespace osc::gui {

std::vector<OpLinks> buildOpLinks(const Analysis& a) {
    std::vector<OpLinks> out(a.devices.size());
    for (size_t d = 0; d < a.devices.size(); ++d) out[d].matched.assign(a.devices[d].collectives.size(), -1);
    auto valid = [&](std::pair<int, int> op) {
        return op.first >= 0 && static_cast<size_t>(op.first) < out.size() && op.second >= 0 &&
               static_cast<size_t>(op.second) < out[static_cast<size_t>(op.first)].matched.size();
    };
    for (size_t m = 0; m < a.matched.size(); ++m)
        for (const auto& op : a.matched[m].instances)
            if (valid(op))
                out[static_cast<size_t>(op.first)].matched[static_cast<size_t>(op.second)] = static_cast<int32_t>(m);
    if (a.p2p.empty()) return out;
    // Compressed rows: count per operation, prefix sums, then fill.
    for (size_t d = 0; d < out.size(); ++d) out[d].transferBegin.assign(out[d].matched.size() + 1, 0);
    for (const P2pTransfer& t : a.p2p)
        for (const auto& op : {t.sender, t.receiver})
            if (valid(op)) ++out[static_cast<size_t>(op.first)].transferBegin[static_cast<size_t>(op.second) + 1];
    for (OpLinks& l : out) {
        for (size_t i = 1; i < l.transferBegin.size(); ++i) l.transferBegin[i] += l.transferBegin[i - 1];
        l.transfers.resize(l.transferBegin.back());
    }
    std::vector<std::vector<uint32_t>> next(out.size());
    for (size_t d = 0; d < out.size(); ++d)
        next[d].assign(out[d].transferBegin.begin(), out[d].transferBegin.end() - 1);
    for (size_t t = 0; t < a.p2p.size(); ++t)
        for (const auto& op : {a.p2p[t].sender, a.p2p[t].receiver})
            if (valid(op)) {
                auto& slot = next[static_cast<size_t>(op.first)][static_cast<size_t>(op.second)];
                out[static_cast<size_t>(op.first)].transfers[slot++] = static_cast<uint32_t>(t);
            }
    return out;
}

int opOfKernel(const DeviceAnalysis& d, uint32_t kernelRow, TimeNs start) {
    const auto& ops = d.collectives;  // start-sorted
    auto it = std::lower_bound(ops.begin(), ops.end(), start,
                               [](const CollectiveInstance& c, TimeNs t) { return c.start_ns < t; });
    for (; it != ops.end() && it->start_ns == start; ++it)
        if (it->kernelIndex == kernelRow) return static_cast<int>(it - ops.begin());
    return -1;
}

}  // namespace osc::gui

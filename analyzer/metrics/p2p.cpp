#include "analyzer/metrics/p2p.h"

#include "analyzer/metrics/multirank.h"
#include "analyzer/metrics/union_find.h"

#include <algorithm>
#include <climits>
#include <map>
#include <numeric>
#include <tuple>

namespace osc {
namespace {

struct End {
    int device, op;
    uint64_t bytes;
    std::optional<uint64_t> seq;
};

std::vector<std::optional<uint64_t>> seqsOf(const std::vector<End>& ends) {
    std::vector<std::optional<uint64_t>> out;
    out.reserve(ends.size());
    for (const auto& e : ends) out.push_back(e.seq);
    return out;
}

// Sorted (number, index) of one side of a route, or nothing when a part
// has no number or a number repeats.
std::optional<std::vector<std::pair<uint64_t, size_t>>> numbered(const std::vector<std::optional<uint64_t>>& seqs) {
    std::vector<std::pair<uint64_t, size_t>> out;
    out.reserve(seqs.size());
    for (size_t i = 0; i < seqs.size(); ++i) {
        if (!seqs[i]) return std::nullopt;
        out.emplace_back(*seqs[i], i);
    }
    std::sort(out.begin(), out.end());
    for (size_t i = 1; i < out.size(); ++i)
        if (out[i].first == out[i - 1].first) return std::nullopt;
    return out;
}

// Sends and receives of one route: communicator, sending device, receiving device.
using Route = std::tuple<uint64_t, int, int>;
struct RouteParts {
    std::vector<End> sends, receives;  // each in its device's order
};

const CollectiveInstance& opAt(const Analysis& a, int device, int op) {
    return a.devices[static_cast<size_t>(device)].collectives[static_cast<size_t>(op)];
}

// All-to-all SendRecv kernels linked by matched sends form one exchange per dispatch.
void appendExchanges(Analysis& a) {
    std::vector<size_t> offset(a.devices.size() + 1, 0);
    for (size_t d = 0; d < a.devices.size(); ++d) offset[d + 1] = offset[d] + a.devices[d].collectives.size();
    const auto id = [&](std::pair<int, int> end) {
        return offset[static_cast<size_t>(end.first)] + static_cast<size_t>(end.second);
    };
    bool any = false;
    for (const auto& t : a.p2p)
        if (opAt(a, t.sender.first, t.sender.second).allToAll &&
            opAt(a, t.receiver.first, t.receiver.second).allToAll)
            any = true;
    if (!any) return;
    UnionFind sets(offset.back());
    std::vector<char> linked(offset.back(), 0);
    for (const auto& t : a.p2p) {
        if (!opAt(a, t.sender.first, t.sender.second).allToAll ||
            !opAt(a, t.receiver.first, t.receiver.second).allToAll)
            continue;
        sets.unite(id(t.sender), id(t.receiver));
        linked[id(t.sender)] = linked[id(t.receiver)] = 1;
    }
    std::map<size_t, MatchedCollective> groups;
    for (size_t d = 0; d < a.devices.size(); ++d)
        for (size_t i = 0; i < a.devices[d].collectives.size(); ++i) {
            const size_t x = offset[d] + i;
            if (!linked[x]) continue;
            MatchedCollective& m = groups[sets.find(x)];
            // One operation per device, its first: the same rule as collectives.
            if (!m.instances.empty() && m.instances.back().first == static_cast<int>(d)) continue;
            m.instances.emplace_back(static_cast<int>(d), static_cast<int>(i));
        }
    for (auto& [root, m] : groups) {
        if (m.instances.size() < 2) continue;
        m.collective = "AllToAll";
        m.pointToPoint = true;
        for (const auto& [d, i] : m.instances)
            if (!m.commHash) m.commHash = opAt(a, d, i).commHash;
        appendMatched(a, std::move(m));
    }
    sortMatchedByFirstStart(a);
}

}  // namespace

std::vector<std::pair<size_t, size_t>> pairRoute(const std::vector<std::optional<uint64_t>>& sends,
                                                 const std::vector<std::optional<uint64_t>>& receives) {
    std::vector<std::pair<size_t, size_t>> out;
    const auto bySend = numbered(sends);
    const auto byReceive = bySend ? numbered(receives) : std::nullopt;
    if (bySend && byReceive) {
        // Captures that began at different moments hold sends whose receives
        // were never captured (or the reverse): the numbers still agree.
        for (size_t i = 0; i < sends.size(); ++i) {
            const auto at = std::lower_bound(byReceive->begin(), byReceive->end(),
                                             std::pair<uint64_t, size_t>{*sends[i], 0});
            if (at != byReceive->end() && at->first == *sends[i]) out.emplace_back(i, at->second);
        }
        return out;
    }
    const size_t n = std::min(sends.size(), receives.size());
    for (size_t k = 0; k < n; ++k) out.emplace_back(k, k);
    return out;
}

// (communicator, rank in it) -> device, from the rows attached to each device's operations.
std::map<std::pair<uint64_t, int32_t>, int> devicesByCommRank(const Analysis& a) {
    std::map<std::pair<uint64_t, int32_t>, int> out;
    for (size_t d = 0; d < a.devices.size(); ++d) {
        std::pair<uint64_t, int32_t> last{0, -2};
        for (const auto& op : a.devices[d].collectives) {
            if (!op.commHash || op.commRank < 0) continue;
            const std::pair<uint64_t, int32_t> key{*op.commHash, op.commRank};
            if (key == last) continue;  // a device mostly repeats one communicator
            last = key;
            out.emplace(key, static_cast<int>(d));
        }
    }
    return out;
}

void markAllToAll(std::vector<CollectiveInstance>& ops) {
    std::vector<char> to, from;
    for (auto& op : ops) {
        if (op.collective == "AllToAll") {
            op.allToAll = true;
            continue;
        }
        const int32_t n = op.commSize;
        // Sends to and receives from every other rank need 2(n - 1) parts,
        // which also bounds the work for a communicator size read from a file.
        if (op.collective != "SendRecv" || n < 3 || op.commRank < 0 || op.commRank >= n ||
            op.p2p.size() < 2 * static_cast<size_t>(n - 1))
            continue;
        to.assign(static_cast<size_t>(n), 0);
        from.assign(static_cast<size_t>(n), 0);
        for (const auto& part : op.p2p)
            if (part.peer >= 0 && part.peer < n) (part.send ? to : from)[static_cast<size_t>(part.peer)] = 1;
        bool every = true;
        for (int32_t r = 0; r < n && every; ++r)
            if (r != op.commRank && (!to[static_cast<size_t>(r)] || !from[static_cast<size_t>(r)])) every = false;
        op.allToAll = every;
    }
}

P2pLeftovers matchPointToPoint(Analysis& a) {
    a.p2p.clear();
    P2pLeftovers left;
    const auto deviceOf = devicesByCommRank(a);
    std::map<Route, RouteParts> routes;
    for (size_t d = 0; d < a.devices.size(); ++d) {
        const auto& ops = a.devices[d].collectives;
        for (size_t i = 0; i < ops.size(); ++i) {
            const auto& op = ops[i];
            if (op.collective != "SendRecv") continue;
            if (op.p2p.empty()) {
                ++left.kernelsWithoutPeers;
                continue;
            }
            for (const auto& part : op.p2p) {
                if (part.peer == op.commRank) continue;  // to itself: a local copy
                const auto peer = op.commHash ? deviceOf.find({*op.commHash, part.peer}) : deviceOf.end();
                if (peer == deviceOf.end()) {
                    ++left.unmatchedParts;
                    continue;
                }
                const int self = static_cast<int>(d), other = peer->second;
                if (other == self) continue;
                const End end{self, static_cast<int>(i), part.bytes, part.seq};
                if (part.send)
                    routes[{*op.commHash, self, other}].sends.push_back(end);
                else
                    routes[{*op.commHash, other, self}].receives.push_back(end);
            }
        }
    }
    for (const auto& [route, parts] : routes) {
        const auto pairs = pairRoute(seqsOf(parts.sends), seqsOf(parts.receives));
        left.unmatchedParts += parts.sends.size() + parts.receives.size() - 2 * pairs.size();
        for (const auto& [k, j] : pairs) {
            const End& s = parts.sends[k];
            const End& r = parts.receives[j];
            a.p2p.push_back({{s.device, s.op}, {r.device, r.op}, std::get<0>(route), s.bytes});
        }
    }
    // In time order, for readers (JSON, the GUI): by the send's start.
    std::stable_sort(a.p2p.begin(), a.p2p.end(), [&](const P2pTransfer& x, const P2pTransfer& y) {
        return opAt(a, x.sender.first, x.sender.second).start_ns < opAt(a, y.sender.first, y.sender.second).start_ns;
    });
    appendExchanges(a);
    return left;
}

std::string p2pWarning(const P2pLeftovers& left) {
    std::string out;
    if (left.kernelsWithoutPeers > 0)
        out = std::to_string(left.kernelsWithoutPeers) +
              " SendRecv kernel(s) carry no peer (no NCCL plugin Send/Recv rows, no PyTorch "
              "'Src Rank'/'Dst Rank' arguments): their send/receive pairs, waiting and all-to-all "
              "bytes are unknown";
    if (left.unmatchedParts > 0)
        out += (out.empty() ? "" : "; ") + std::to_string(left.unmatchedParts) +
               " send(s)/receive(s) found no partner (the peer's capture is missing, or the two "
               "sides recorded different counts)";
    return out;
}

}  // namespace osc

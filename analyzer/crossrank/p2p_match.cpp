#include "analyzer/crossrank/p2p_match.h"

#include "analyzer/crossrank/union_find.h"

#include <algorithm>
#include <array>
#include <climits>
#include <numeric>
#include <tuple>

namespace osc::crossrank {
namespace {

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
            const auto at =
                std::lower_bound(byReceive->begin(), byReceive->end(), std::pair<uint64_t, size_t>{*sends[i], 0});
            if (at != byReceive->end() && at->first == *sends[i]) out.emplace_back(i, at->second);
        }
        return out;
    }
    const size_t n = std::min(sends.size(), receives.size());
    for (size_t k = 0; k < n; ++k) out.emplace_back(k, k);
    return out;
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

P2pMatch::P2pMatch(const DeviceSource& source) {
    const size_t n = source.deviceCount();
    ops_.resize(n);
    exchangeOf_.resize(n);
    waitUntil_.resize(n);
    withoutPeer_.resize(n);
    shift_.assign(n, 0);
    for (size_t i = 0; i < n; ++i)
        for (const auto& key : source.header(i).commRanks) deviceOf_.emplace(key, static_cast<int>(i));

    // Per route (communicator, sender, receiver) the sends and receives,
    // each in its device's order, paired by pairRoute.
    struct End {
        int device;
        uint32_t op;
        uint64_t bytes;
        std::optional<uint64_t> seq;
    };
    std::map<std::tuple<uint64_t, int, int>, std::pair<std::vector<End>, std::vector<End>>> routes;
    for (size_t i = 0; i < n; ++i) {
        if (source.header(i).p2pRecords == 0) continue;
        const std::vector<P2pPartRecord> records = source.p2p(i);
        const std::vector<OpRecord> ops = source.ops(i);
        std::vector<uint32_t> allToAll;
        for (const auto& r : source.alltoall(i)) allToAll.push_back(r.op);
        const int self = static_cast<int>(i);
        for (const auto& r : records) {
            if (ops_[i].empty() || ops_[i].back().op != r.op) {
                const bool a2a = std::binary_search(allToAll.begin(), allToAll.end(), r.op);
                ops_[i].push_back({r.op, ops[r.op].start_ns, ops[r.op].end_ns, a2a,
                                   r.hasCommHash ? std::optional<uint64_t>(r.commHash) : std::nullopt});
            }
            if (!r.sendRecv) continue;  // an all-to-all the rows name: its parts give bytes only
            if (r.parts == 0) {
                ++kernelsWithoutPeers_;
                withoutPeer_[i].push_back(r.op);
                continue;
            }
            if (r.peer == r.commRank) continue;  // to itself: a local copy
            const auto peer = r.hasCommHash ? deviceOf_.find({r.commHash, r.peer}) : deviceOf_.end();
            if (peer == deviceOf_.end()) {
                ++unmatchedParts_;
                continue;
            }
            const int other = peer->second;
            if (other == self) continue;
            const End end{self, r.op, r.bytes, r.hasSeq ? std::optional<uint64_t>(r.seq) : std::nullopt};
            if (r.send)
                routes[{r.commHash, self, other}].first.push_back(end);
            else
                routes[{r.commHash, other, self}].second.push_back(end);
        }
    }
    const auto seqsOf = [](const std::vector<End>& ends) {
        std::vector<std::optional<uint64_t>> out;
        out.reserve(ends.size());
        for (const auto& e : ends) out.push_back(e.seq);
        return out;
    };
    for (const auto& [route, ends] : routes) {
        const auto& [sends, receives] = ends;
        const auto matched = pairRoute(seqsOf(sends), seqsOf(receives));
        unmatchedParts_ += sends.size() + receives.size() - 2 * matched.size();
        for (const auto& [k, j] : matched)
            pairs_.push_back(
                {sends[k].device, sends[k].op, receives[j].device, receives[j].op, sends[k].bytes, std::get<0>(route)});
    }
    linkExchanges();
}

const P2pMatch::Op& P2pMatch::opOf(int device, uint32_t op) const {
    const auto& ops = ops_[static_cast<size_t>(device)];
    return *std::lower_bound(ops.begin(), ops.end(), op, [](const Op& o, uint32_t v) { return o.op < v; });
}

TimeNs P2pMatch::startOf(int device, uint32_t op) const {
    return opOf(device, op).start + shift_[static_cast<size_t>(device)];
}

TimeNs P2pMatch::endOf(int device, uint32_t op) const {
    return opOf(device, op).end + shift_[static_cast<size_t>(device)];
}

// All-to-all SendRecv kernels linked by matched sends form one exchange per
// dispatch: one group of docs/design.md section 4 "Multi-rank", one
// operation per device, its first.
void P2pMatch::linkExchanges() {
    const auto bothAllToAll = [&](const Pair& p) {
        return opOf(p.sender, p.senderOp).allToAll && opOf(p.receiver, p.receiverOp).allToAll;
    };
    if (std::none_of(pairs_.begin(), pairs_.end(), bothAllToAll)) return;
    // Ids in (device, operation) order, as the metrics' offsets number them.
    std::vector<size_t> offset(ops_.size() + 1, 0);
    for (size_t d = 0; d < ops_.size(); ++d) offset[d + 1] = offset[d] + ops_[d].size();
    const auto id = [&](int device, uint32_t op) {
        const auto& ops = ops_[static_cast<size_t>(device)];
        const auto at = std::lower_bound(ops.begin(), ops.end(), op, [](const Op& o, uint32_t v) { return o.op < v; });
        return offset[static_cast<size_t>(device)] + static_cast<size_t>(at - ops.begin());
    };
    UnionFind sets(offset.back());
    std::vector<char> linked(offset.back(), 0);
    for (const auto& p : pairs_) {
        if (!bothAllToAll(p)) continue;
        const size_t s = id(p.sender, p.senderOp), r = id(p.receiver, p.receiverOp);
        sets.unite(s, r);
        linked[s] = linked[r] = 1;
    }
    std::map<size_t, P2pExchange> groups;
    for (size_t d = 0; d < ops_.size(); ++d)
        for (size_t k = 0; k < ops_[d].size(); ++k) {
            const size_t x = offset[d] + k;
            if (!linked[x]) continue;
            const size_t root = sets.find(x);
            P2pExchange& m = groups[root];
            if (root == x) m.root = {static_cast<int>(d), static_cast<int>(ops_[d][k].op)};
            // One operation per device, its first: the same rule as collectives.
            if (!m.instances.empty() && m.instances.back().first == static_cast<int>(d)) continue;
            m.instances.emplace_back(static_cast<int>(d), static_cast<int>(ops_[d][k].op));
            if (!m.commHash) m.commHash = ops_[d][k].commHash;
        }
    for (auto& [root, m] : groups)
        if (m.instances.size() >= 2) exchanges_.push_back(std::move(m));
}

void P2pMatch::time(const std::function<TimeNs(size_t device)>& shiftOf) {
    for (size_t d = 0; d < shift_.size(); ++d) shift_[d] = shiftOf(d);

    timeOrder_.resize(pairs_.size());
    std::iota(timeOrder_.begin(), timeOrder_.end(), 0u);
    std::stable_sort(timeOrder_.begin(), timeOrder_.end(), [&](uint32_t x, uint32_t y) {
        return startOf(pairs_[x].sender, pairs_[x].senderOp) < startOf(pairs_[y].sender, pairs_[y].senderOp);
    });

    for (auto& m : exchanges_) {
        m.firstStart = m.firstEnd = INT64_MAX;
        m.lastStart = m.second = INT64_MIN;
        m.lastDevice = -1;
        m.atLast = 0;
        for (const auto& [d, i] : m.instances) {
            const TimeNs s = startOf(d, static_cast<uint32_t>(i));
            m.firstStart = std::min(m.firstStart, s);
            m.firstEnd = std::min(m.firstEnd, endOf(d, static_cast<uint32_t>(i)));
            // The last arrival and the one before it (4c).
            if (s > m.lastStart) {
                m.second = m.lastStart;
                m.lastStart = s;
                m.lastDevice = d;
                m.atLast = 1;
            } else {
                if (s == m.lastStart) ++m.atLast;
                m.second = std::max(m.second, s);
            }
        }
    }
    std::sort(exchanges_.begin(), exchanges_.end(), [](const P2pExchange& x, const P2pExchange& y) {
        return std::tie(x.firstStart, x.root) < std::tie(y.firstStart, y.root);
    });
    for (auto& v : exchangeOf_) v.clear();
    for (size_t e = 0; e < exchanges_.size(); ++e)
        for (const auto& [d, i] : exchanges_[e].instances)
            exchangeOf_[static_cast<size_t>(d)].emplace_back(static_cast<uint32_t>(i), static_cast<int>(e));
    for (auto& v : exchangeOf_) std::sort(v.begin(), v.end());

    // A send or receive outside any exchange waits for the partners that
    // arrived while it ran: the latest start among it and the partners that
    // started before it ended (or as it ended: a transfer that takes no
    // time). A partner that started only after it had finished (a small
    // send NCCL buffered) kept no one waiting. Each linked pair counts once
    // for last arrivals: the later one, when the earlier was still running,
    // delayed it by the difference of starts.
    std::vector<std::vector<TimeNs>> last(ops_.size());
    std::vector<std::array<int64_t, 4>> linkedPairs;
    const auto index = [&](int device, uint32_t op) {
        const auto& ops = ops_[static_cast<size_t>(device)];
        return static_cast<size_t>(
            std::lower_bound(ops.begin(), ops.end(), op, [](const Op& o, uint32_t v) { return o.op < v; }) -
            ops.begin());
    };
    const auto consider = [&](int me, uint32_t meOp, int other, uint32_t otherOp) {
        auto& l = last[static_cast<size_t>(me)];
        if (l.empty()) l.assign(ops_[static_cast<size_t>(me)].size(), INT64_MIN);
        TimeNs& t = l[index(me, meOp)];
        if (t == INT64_MIN) t = startOf(me, meOp);
        const TimeNs y = startOf(other, otherOp);
        if (y <= endOf(me, meOp)) t = std::max(t, y);
    };
    for (const auto& p : pairs_) {
        const bool senderFree = exchangeOf(static_cast<size_t>(p.sender), p.senderOp) < 0;
        const bool receiverFree = exchangeOf(static_cast<size_t>(p.receiver), p.receiverOp) < 0;
        if (senderFree) consider(p.sender, p.senderOp, p.receiver, p.receiverOp);
        if (receiverFree) consider(p.receiver, p.receiverOp, p.sender, p.senderOp);
        if (senderFree && receiverFree) {
            std::array<int64_t, 4> key{p.sender, p.senderOp, p.receiver, p.receiverOp};
            if (std::tie(key[2], key[3]) < std::tie(key[0], key[1])) key = {key[2], key[3], key[0], key[1]};
            linkedPairs.push_back(key);
        }
    }
    for (size_t d = 0; d < ops_.size(); ++d) {
        auto& w = waitUntil_[d];
        w.clear();
        for (const auto& [op, e] : exchangeOf_[d]) w.emplace_back(op, exchanges_[static_cast<size_t>(e)].lastStart);
        for (size_t k = 0; k < last[d].size(); ++k)
            if (last[d][k] != INT64_MIN) w.emplace_back(ops_[d][k].op, last[d][k]);
        std::sort(w.begin(), w.end());
    }
    // Each linked pair counts once for last arrivals.
    std::sort(linkedPairs.begin(), linkedPairs.end());
    linkedPairs.erase(std::unique(linkedPairs.begin(), linkedPairs.end()), linkedPairs.end());
    pairArrivals_.clear();
    for (const auto& k : linkedPairs) {
        const auto xd = static_cast<int>(k[0]), yd = static_cast<int>(k[2]);
        const auto xo = static_cast<uint32_t>(k[1]), yo = static_cast<uint32_t>(k[3]);
        const TimeNs xs = startOf(xd, xo), ys = startOf(yd, yo);
        if (xs == ys) continue;
        const bool yLate = ys > xs;
        const TimeNs earlyEnd = yLate ? endOf(xd, xo) : endOf(yd, yo);
        const TimeNs lateStart = yLate ? ys : xs, earlyStart = yLate ? xs : ys;
        if (lateStart > earlyEnd) continue;
        pairArrivals_.emplace_back(yLate ? yd : xd, lateStart - earlyStart);
    }
}

std::vector<P2pTransfer> P2pMatch::transfers() const {
    std::vector<P2pTransfer> out;
    out.reserve(timeOrder_.size());
    for (uint32_t k : timeOrder_) {
        const Pair& p = pairs_[k];
        out.push_back({{p.sender, static_cast<int>(p.senderOp)},
                       {p.receiver, static_cast<int>(p.receiverOp)},
                       p.commHash,
                       p.bytes});
    }
    return out;
}

int P2pMatch::exchangeOf(size_t device, uint32_t op) const {
    const auto& v = exchangeOf_[device];
    const auto at = std::lower_bound(v.begin(), v.end(), std::pair<uint32_t, int>{op, INT_MIN});
    return at != v.end() && at->first == op ? at->second : -1;
}

std::string P2pMatch::warning() const { return p2pWarning({unmatchedParts_, kernelsWithoutPeers_}); }

void P2pMatch::addArrivals(std::vector<int>& lastArrivals, std::vector<TimeNs>& delayCaused) const {
    for (const auto& m : exchanges_) {
        if (m.atLast != 1 || m.instances.size() < 2) continue;
        lastArrivals[static_cast<size_t>(m.lastDevice)] += 1;
        delayCaused[static_cast<size_t>(m.lastDevice)] += m.lastStart - m.second;
    }
    for (const auto& [device, delay] : pairArrivals_) {
        lastArrivals[static_cast<size_t>(device)] += 1;
        delayCaused[static_cast<size_t>(device)] += delay;
    }
}

}  // namespace osc::crossrank

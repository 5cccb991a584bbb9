#include "gui/model/rank_collectives.h"

#include "analyzer/crossrank/wait_transfer.h"
#include "analyzer/metrics/bus_bandwidth.h"
#include "gui/model/rank_groups.h"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

namespace osc::gui {
namespace {

const CollectiveInstance& opAt(const Analysis& a, std::pair<int, int> op) { return *instanceAt(a, op); }

// Where each collective sits among its device's operations of the same step
// (1-based): a DDP bucket's number when the plugin gives no sequence number.
// One pass per device, not one per row: a long job matches thousands.
std::vector<int> bucketsOf(const DeviceAnalysis& d) {
    std::vector<int> bucket(d.collectives.size());
    std::map<int, int> seen;  // by step
    for (size_t i = 0; i < d.collectives.size(); ++i) bucket[i] = ++seen[d.collectives[i].step];
    return bucket;
}

}  // namespace

const CollectiveInstance* instanceAt(const Analysis& a, std::pair<int, int> op) {
    if (op.first < 0 || static_cast<size_t>(op.first) >= a.devices.size() || op.second < 0) return nullptr;
    const auto& ops = a.devices[static_cast<size_t>(op.first)].collectives;
    return static_cast<size_t>(op.second) < ops.size() ? &ops[static_cast<size_t>(op.second)] : nullptr;
}

std::vector<RankCollectiveRow> rankCollectiveRows(const Analysis& a) {
    std::vector<RankCollectiveRow> rows;
    rows.reserve(a.matched.size());
    std::map<int, std::vector<int>> buckets;  // by device, for the devices rows name
    for (size_t m = 0; m < a.matched.size(); ++m) {
        const MatchedCollective& mc = a.matched[m];
        std::vector<std::pair<int, int>> ops;
        for (const auto& op : mc.instances)
            if (instanceAt(a, op)) ops.push_back(op);
        if (ops.empty()) continue;
        RankCollectiveRow r;
        r.matched = static_cast<int>(m);
        r.collective = mc.collective;
        r.seqNumber = mc.seqNumber;
        r.commHash = mc.commHash;
        r.ranks = static_cast<int>(ops.size());
        r.skew_ns = mc.skew_ns;
        r.transfer_ns = mc.transfer_ns;
        const auto lowest = *std::min_element(ops.begin(), ops.end());
        const DeviceAnalysis& low = a.devices[static_cast<size_t>(lowest.first)];
        const CollectiveInstance& first = opAt(a, lowest);
        if (first.step >= 0 && static_cast<size_t>(first.step) < low.steps.size())
            r.step = low.steps[static_cast<size_t>(first.step)].name;
        auto b = buckets.find(lowest.first);
        if (b == buckets.end()) b = buckets.emplace(lowest.first, bucketsOf(low)).first;
        r.bucket = b->second[static_cast<size_t>(lowest.second)];
        TimeNs last = INT64_MIN;
        r.start_ns = INT64_MAX;
        r.end_ns = INT64_MIN;
        std::vector<double> busbw;
        for (const auto& op : ops) {
            const CollectiveInstance& c = opAt(a, op);
            if (c.start_ns > last) last = c.start_ns, r.lastDevice = op.first;
            r.start_ns = std::min(r.start_ns, c.start_ns);
            r.end_ns = std::max(r.end_ns, c.end_ns);
            if (c.bytes) r.bytes = std::max(r.bytes.value_or(0), *c.bytes);
            if (c.busbw_gbps) busbw.push_back(*c.busbw_gbps);
            r.rankTime_ns += c.end_ns - c.start_ns;
        }
        for (const auto& op : ops) {
            const CollectiveInstance& c = opAt(a, op);
            r.waiting_ns += crossrank::splitAtLastArrival(c.start_ns, c.end_ns, last).waiting.length();
        }
        r.lastRank = a.devices[static_cast<size_t>(r.lastDevice)].rank;
        r.busbw_gbps = lowerMedianOrNull(busbw);
        rows.push_back(std::move(r));
    }
    return rows;
}

std::vector<RankCommunicator> rankCommunicators(const Analysis& a, std::vector<RankCollectiveRow>& rows) {
    // Members as one flag per device: every instance of 400 collectives over
    // 1,024 ranks is counted once, without sorting 400,000 ranks.
    std::map<uint64_t, std::pair<RankCommunicator, std::vector<char>>> byHash;
    for (const RankCollectiveRow& r : rows) {
        if (!r.commHash) continue;
        auto& [c, member] = byHash[*r.commHash];
        c.hash = *r.commHash;
        ++c.collectives;
        member.resize(a.devices.size(), 0);
        for (const auto& op : a.matched[static_cast<size_t>(r.matched)].instances)
            if (instanceAt(a, op)) member[static_cast<size_t>(op.first)] = 1;
    }
    std::vector<RankCommunicator> out;
    for (auto& [hash, entry] : byHash) {
        auto& [c, member] = entry;
        for (size_t d = 0; d < member.size(); ++d)
            if (member[d] && a.devices[d].rank >= 0) c.ranks.push_back(a.devices[d].rank);
        std::sort(c.ranks.begin(), c.ranks.end());
        c.ranks.erase(std::unique(c.ranks.begin(), c.ranks.end()), c.ranks.end());
        c.label = rankSpan(c.ranks);
        if (c.label.empty()) c.label = "ranks unknown";
        out.push_back(std::move(c));
    }
    std::sort(out.begin(), out.end(), [](const RankCommunicator& x, const RankCommunicator& y) {
        const int lx = x.ranks.empty() ? INT32_MAX : x.ranks.front(),
                  ly = y.ranks.empty() ? INT32_MAX : y.ranks.front();
        return std::tie(lx, x.ranks, x.hash) < std::tie(ly, y.ranks, y.hash);
    });
    // The same members twice (two process groups over the same ranks): the hash tells them apart.
    std::map<std::string, int> uses;
    for (const RankCommunicator& c : out) ++uses[c.label];
    for (RankCommunicator& c : out)
        if (uses[c.label] > 1) c.label += " (" + hexHash(c.hash) + ")";
    std::map<uint64_t, int> index;
    for (size_t i = 0; i < out.size(); ++i) index[out[i].hash] = static_cast<int>(i);
    for (RankCollectiveRow& r : rows) r.communicator = r.commHash ? index[*r.commHash] : -1;
    return out;
}

}  // namespace osc::gui

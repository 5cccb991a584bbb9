#include "gui/model/rank_groups.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace osc::gui {
namespace {

// Job order: by rank, ranks unknown last, then host, pid and GPU.
bool jobOrder(const RankIdentity& a, const RankIdentity& b) {
    const auto key = [](const RankIdentity& i) {
        return std::make_tuple(i.rank < 0, i.rank, i.host, i.pid, i.device, i.group);
    };
    return key(a) < key(b);
}

// The ranks of `members`, as rankSpan words them.
std::string memberSpan(const std::vector<const RankIdentity*>& members) {
    std::vector<int> ranks;
    for (const RankIdentity* m : members)
        if (m->rank >= 0) ranks.push_back(m->rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return rankSpan(ranks);
}

std::string gpus(size_t n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

RankSection makeSection(std::string key, std::string title, const std::vector<const RankIdentity*>& members) {
    RankSection s{std::move(key), std::move(title), {}, false};
    for (const RankIdentity* m : members) s.groups.push_back(m->group);
    return s;
}

std::vector<RankSection> byHost(const std::vector<RankIdentity>& ids) {
    std::vector<std::string> hosts;  // in the order their first rank comes
    std::map<std::string, std::vector<const RankIdentity*>> members;
    for (const RankIdentity& i : ids) {
        if (!members.count(i.host)) hosts.push_back(i.host);
        members[i.host].push_back(&i);
    }
    std::vector<RankSection> out;
    for (const std::string& h : hosts) {
        const auto& m = members[h];
        const std::string span = memberSpan(m);
        out.push_back(makeSection(
            h,
            (h.empty() ? std::string("host unknown") : h) + " · " + gpus(m.size()) + (span.empty() ? "" : " · " + span),
            m));
    }
    return out;
}

std::vector<RankSection> byCommunicator(const std::vector<RankIdentity>& ids) {
    std::map<uint64_t, std::vector<const RankIdentity*>> members;
    for (const RankIdentity& i : ids)
        for (uint64_t c : i.comms)
            if (std::find(members[c].begin(), members[c].end(), &i) == members[c].end()) members[c].push_back(&i);
    // Smallest first, then the one whose lowest member comes first in the job.
    std::vector<uint64_t> order;
    for (const auto& [c, m] : members) order.push_back(c);
    const auto lowest = [&](uint64_t c) {
        const auto& m = members[c];
        return *std::min_element(m.begin(), m.end(),
                                 [](const RankIdentity* a, const RankIdentity* b) { return jobOrder(*a, *b); });
    };
    std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
        if (members[a].size() != members[b].size()) return members[a].size() < members[b].size();
        const RankIdentity *la = lowest(a), *lb = lowest(b);
        if (jobOrder(*la, *lb) != jobOrder(*lb, *la)) return jobOrder(*la, *lb);
        return a < b;
    });
    std::set<const RankIdentity*> placed;
    std::vector<std::pair<const RankIdentity*, RankSection>> sections;  // with the member that orders it
    for (uint64_t c : order) {
        std::vector<const RankIdentity*> mine;
        for (const RankIdentity* m : members[c])
            if (placed.insert(m).second) mine.push_back(m);
        if (mine.empty()) continue;
        const size_t all = members[c].size();
        std::string title = "communicator " + hexHash(c) + " · " +
                            (mine.size() == all ? std::to_string(all) + " ranks"
                                                : std::to_string(mine.size()) + " of its " + std::to_string(all) +
                                                      " ranks (the others under a smaller one)");
        const std::string span = memberSpan(mine);
        if (!span.empty()) title += " · " + span;
        sections.emplace_back(mine.front(), makeSection(hexHash(c), std::move(title), mine));
    }
    std::stable_sort(sections.begin(), sections.end(),
                     [](const auto& a, const auto& b) { return jobOrder(*a.first, *b.first); });
    std::vector<const RankIdentity*> rest;
    for (const RankIdentity& i : ids)
        if (!placed.count(&i)) rest.push_back(&i);
    std::vector<RankSection> out;
    for (auto& s : sections) out.push_back(std::move(s.second));
    if (!rest.empty())
        out.push_back(makeSection(
            "", "no communicator known (the NCCL profiler plugin's rows name them) · " + gpus(rest.size()), rest));
    return out;
}

}  // namespace

std::string rankSpan(const std::vector<int>& ranks) {
    if (ranks.empty()) return "";
    if (ranks.size() == 1) return "rank " + std::to_string(ranks.front());
    if (ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size()))
        return "ranks " + std::to_string(ranks.front()) + "–" + std::to_string(ranks.back());
    std::string s = "ranks ";
    for (size_t i = 0; i < std::min<size_t>(ranks.size(), 4); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
    return ranks.size() > 4 ? s + ", …" : s;
}

std::string hexHash(uint64_t h) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(h));
    return buf;
}

std::vector<RankSection> groupRanks(std::vector<RankIdentity> ids, RankGrouping how) {
    if (how == RankGrouping::None) return {};
    std::stable_sort(ids.begin(), ids.end(), jobOrder);
    return how == RankGrouping::Host ? byHost(ids) : byCommunicator(ids);
}

std::vector<RankIdentity> rankIdentities(const TimelineModel& model, const Analysis* analysis) {
    std::vector<RankIdentity> out;
    if (model.empty()) return out;
    for (size_t g = 0; g < model.groups().size(); ++g) {
        const DeviceGroup& group = model.groups()[g];
        const Process& p = model.processOf(static_cast<int>(g));
        RankIdentity id;
        id.group = static_cast<int>(g);
        id.host = p.host;
        id.rank = p.rank;
        id.pid = p.pid;
        if (const Device* d = model.deviceOf(static_cast<int>(g))) id.device = static_cast<int>(d->id);
        if (analysis && group.analysisDevice >= 0 &&
            static_cast<size_t>(group.analysisDevice) < analysis->devices.size()) {
            for (const CollectiveInstance& c : analysis->devices[static_cast<size_t>(group.analysisDevice)].collectives)
                if (c.commHash && std::find(id.comms.begin(), id.comms.end(), *c.commHash) == id.comms.end())
                    id.comms.push_back(*c.commHash);
        }
        out.push_back(std::move(id));
    }
    return out;
}

std::string rankRowLabel(const RankIdentity& id, bool withGpu, bool withHost) {
    std::string s = id.rank >= 0 ? "rank " + std::to_string(id.rank)
                                 : (id.host.empty() ? "" : id.host + ":") + std::to_string(id.pid);
    if (withGpu && id.device >= 0) s += " · GPU " + std::to_string(id.device);
    if (withHost && id.rank >= 0 && !id.host.empty()) s += " · " + id.host;
    return s;
}

void RankView::toggleCollapsed(const std::string& key) { setCollapsed(key, !collapsed_.count(key)); }

void RankView::setCollapsed(const std::string& key, bool collapsed) {
    if (collapsed)
        collapsed_.insert(key);
    else
        collapsed_.erase(key);
}

RankRows RankView::rows(int availableHeight) const {
    RankRows r;
    r.sections = groupRanks(ids_, grouping_);
    for (RankSection& s : r.sections) s.collapsed = collapsed_.count(s.key) > 0;
    r.oneRow = oneRow_;
    r.availableHeight = availableHeight;
    return r;
}

const RankIdentity* RankView::identityOf(int group) const {
    // rankIdentities() lists the groups in order: a label per row stays O(1).
    if (group >= 0 && static_cast<size_t>(group) < ids_.size() && ids_[static_cast<size_t>(group)].group == group)
        return &ids_[static_cast<size_t>(group)];
    for (const RankIdentity& i : ids_)
        if (i.group == group) return &i;
    return nullptr;
}

}  // namespace osc::gui

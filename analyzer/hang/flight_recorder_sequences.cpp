// Flight Recorder dumps as per-rank sequences: one communicator per process
// group, its collectives numbered by collective_seq_id (PyTorch counts every
// collective type on one counter, so the number alone is the call's place).
// Entries of a coalesced call share that number and become one call.
// Sends and receives (is_p2p) involve two ranks, not the group, and are left
// out of the sequences; they still count as what the host did last.
#include "analyzer/hang/rank_sequences.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace osc::hang {
namespace {

using Entry = FlightRecorderEntry;

// Bytes per element of c10's ScalarType names (c10::toString); 0 unknown.
uint64_t dtypeBytes(const std::string& t) {
    static const std::map<std::string, uint64_t> sizes = {{"Float", 4},
                                                          {"Double", 8},
                                                          {"Half", 2},
                                                          {"BFloat16", 2},
                                                          {"Int", 4},
                                                          {"Long", 8},
                                                          {"Short", 2},
                                                          {"Char", 1},
                                                          {"Byte", 1},
                                                          {"Bool", 1},
                                                          {"ComplexHalf", 4},
                                                          {"ComplexFloat", 8},
                                                          {"ComplexDouble", 16},
                                                          {"Float8_e4m3fn", 1},
                                                          {"Float8_e5m2", 1},
                                                          {"Float8_e4m3fnuz", 1},
                                                          {"Float8_e5m2fnuz", 1},
                                                          {"UInt16", 2},
                                                          {"UInt32", 4},
                                                          {"UInt64", 8}};
    const auto it = sizes.find(t);
    return it == sizes.end() ? 0 : it->second;
}

// "nccl:all_reduce" -> "all_reduce"; "nccl:send 0->1" -> "send".
std::string opType(const std::string& profilingName) {
    const size_t colon = profilingName.find(':');
    std::string op = colon == std::string::npos ? profilingName : profilingName.substr(colon + 1);
    const size_t space = op.find(' ');
    return space == std::string::npos ? op : op.substr(0, space);
}

std::string shapesText(const std::vector<std::vector<int64_t>>& shapes) {
    std::string out = "[";
    for (size_t i = 0; i < shapes.size(); ++i) {
        out += i ? ", [" : "[";
        for (size_t j = 0; j < shapes[i].size(); ++j) out += (j ? ", " : "") + std::to_string(shapes[i][j]);
        out += "]";
    }
    return out + "]";
}

std::string groupId(const FlightRecorderEntry& e) {
    return "pg " + e.pgName + (e.pgDesc.empty() || e.pgDesc == "undefined" ? "" : " (" + e.pgDesc + ")");
}

// One call from the entries sharing a collective_seq_id, in dump order.
Call callOf(const std::vector<const Entry*>& parts, int64_t origin) {
    Call c;
    c.slot = {"", static_cast<uint64_t>(parts.front()->collectiveSeqId)};
    c.evidence = Evidence::FlightRecorder;
    std::vector<std::string> ops;
    std::set<std::string> dtypes;
    std::vector<std::vector<int64_t>> shapes;
    uint64_t bytes = 0;
    bool bytesKnown = true, completed = true;
    std::optional<int64_t> completedAt;
    int64_t entered = std::numeric_limits<int64_t>::max();
    for (const Entry* e : parts) {
        const std::string op = opType(e->profilingName);
        // PyTorch closes a coalesced group with an entry of its own.
        if (op != "coalesced" || parts.size() == 1) ops.push_back(op);
        for (size_t t = 0; t < e->inputSizes.size(); ++t) {
            shapes.push_back(e->inputSizes[t]);
            const std::string dtype = t < e->inputDtypes.size() ? e->inputDtypes[t] : "";
            if (!dtype.empty()) dtypes.insert(dtype);
            uint64_t numel = 1;
            for (int64_t d : e->inputSizes[t]) numel *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
            const uint64_t size = dtypeBytes(dtype);
            if (size == 0) bytesKnown = false;
            bytes += numel * size;
        }
        entered = std::min(entered, e->timeCreatedNs);
        if (e->state != Entry::State::Completed) completed = false;
        if (e->timeDiscoveredCompletedNs)
            completedAt = std::max(completedAt.value_or(*e->timeDiscoveredCompletedNs), *e->timeDiscoveredCompletedNs);
    }
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    for (size_t i = 0; i < ops.size(); ++i) c.collective += (i ? "+" : "") + ops[i];
    if (parts.size() > 1) c.collective += " (coalesced, " + std::to_string(parts.size()) + " ops)";
    for (const auto& d : dtypes) c.dtype += (c.dtype.empty() ? "" : ",") + d;
    c.shapes = shapesText(shapes);
    if (bytesKnown && !shapes.empty()) c.bytes = bytes;
    c.enteredNs = entered - origin;
    c.completed = completed;
    if (completed && completedAt) c.completedNs = *completedAt - origin;
    return c;
}

HostActivity hostOf(const FlightRecorderDump& dump, int64_t origin) {
    HostActivity h;
    const Entry* newest = nullptr;
    for (const Entry& e : dump.entries)
        if (!newest || e.timeCreatedNs >= newest->timeCreatedNs) newest = &e;
    if (!newest) return h;
    const int64_t end = newest->timeDiscoveredCompletedNs.value_or(newest->timeCreatedNs);
    h.flightRecorderEntry =
        HostItem{newest->profilingName + " (" + groupId(*newest) + ", seq " +
                     std::to_string(newest->isP2P ? newest->p2pSeqId : newest->collectiveSeqId) + ")",
                 newest->timeCreatedNs - origin, end - origin};
    h.flightRecorderState = newest->state == Entry::State::Completed ? "completed"
                            : newest->state == Entry::State::Started ? "started"
                                                                     : "scheduled";
    if (!newest->threadName.empty()) h.flightRecorderState += ", thread " + newest->threadName;
    h.lastSeenNs = end - origin;
    return h;
}

int64_t earliestTime(const std::vector<FlightRecorderDump>& dumps) {
    int64_t earliest = std::numeric_limits<int64_t>::max();
    for (const auto& d : dumps)
        for (const auto& e : d.entries) earliest = std::min(earliest, e.timeCreatedNs);
    return earliest == std::numeric_limits<int64_t>::max() ? 0 : earliest;
}

int64_t latestTime(const std::vector<FlightRecorderDump>& dumps) {
    int64_t latest = std::numeric_limits<int64_t>::min();
    for (const auto& d : dumps)
        for (const auto& e : d.entries)
            latest = std::max({latest, e.timeCreatedNs, e.timeDiscoveredStartedNs.value_or(latest),
                               e.timeDiscoveredCompletedNs.value_or(latest)});
    return latest;
}

}  // namespace

JobSequences sequencesFromFlightRecorder(const std::vector<FlightRecorderDump>& dumps,
                                         std::optional<int64_t> originUtcNs) {
    JobSequences job;
    job.originUtcNs = originUtcNs.value_or(earliestTime(dumps));
    const int64_t latest = latestTime(dumps);
    job.endNs = latest == std::numeric_limits<int64_t>::min() ? 0 : latest - job.originUtcNs;
    job.endKnown = false;
    // Groups are told apart by name and members: split_group may reuse names.
    std::map<std::pair<std::string, std::vector<int64_t>>, CommunicatorProgress> comms;
    std::set<int> seenRanks;
    for (const FlightRecorderDump& dump : dumps) {
        job.inputs.push_back(dump.path);
        if (!seenRanks.insert(dump.rank).second)
            job.warnings.push_back(dump.path + ": a second Flight Recorder dump of rank " + std::to_string(dump.rank) +
                                   "; both are read");
        const HostActivity host = hostOf(dump, job.originUtcNs);
        // Entries per group, then per collective_seq_id, in dump order.
        std::map<std::string, std::vector<std::vector<const Entry*>>> callsOf;
        std::map<std::string, std::map<int64_t, size_t>> indexOf;
        std::map<std::string, const Entry*> firstOf;
        for (const Entry& e : dump.entries) {
            if (e.isP2P) continue;
            auto& index = indexOf[e.pgName];
            auto& calls = callsOf[e.pgName];
            firstOf.emplace(e.pgName, &e);
            const auto [it, fresh] = index.emplace(e.collectiveSeqId, calls.size());
            if (fresh) calls.emplace_back();
            calls[it->second].push_back(&e);
        }
        std::set<std::string> groups;
        for (const auto& [name, g] : dump.groups) groups.insert(name);
        for (const auto& [name, calls] : callsOf) groups.insert(name);
        for (const std::string& name : groups) {
            const auto g = dump.groups.find(name);
            std::vector<int64_t> members = g == dump.groups.end() ? std::vector<int64_t>{} : g->second.ranks;
            std::sort(members.begin(), members.end());
            CommunicatorProgress& comm = comms[{name, members}];
            comm.source = Source::FlightRecorder;
            comm.seqPerCollective = false;
            if (const auto f = firstOf.find(name); f != firstOf.end())
                comm.id = groupId(*f->second);
            else if (comm.id.empty())
                comm.id = "pg " + name +
                          (g->second.desc.empty() || g->second.desc == "undefined" ? "" : " (" + g->second.desc + ")");
            if (!members.empty()) comm.size = static_cast<int>(members.size());
            RankProgress rank;
            rank.rank = dump.rank;
            rank.label = "rank " + std::to_string(dump.rank);
            rank.source = dump.path;
            rank.host = host;
            const auto at = std::lower_bound(members.begin(), members.end(), dump.rank);
            if (at != members.end() && *at == dump.rank)
                rank.commRank = static_cast<int>(at - members.begin());
            else if (!members.empty())
                job.warnings.push_back(dump.path + ": rank " + std::to_string(dump.rank) + " is not among " + comm.id +
                                       "'s members");
            if (const auto c = callsOf.find(name); c != callsOf.end())
                for (const auto& parts : c->second) rank.calls.push_back(callOf(parts, job.originUtcNs));
            completeInOrder(rank.calls);
            comm.ranks.push_back(std::move(rank));
        }
    }
    for (auto& [key, comm] : comms) {
        std::stable_sort(comm.ranks.begin(), comm.ranks.end(), [](const RankProgress& a, const RankProgress& b) {
            return std::pair(a.commRank, a.rank) < std::pair(b.commRank, b.rank);
        });
        job.communicators.push_back(std::move(comm));
    }
    return job;
}

}  // namespace osc::hang

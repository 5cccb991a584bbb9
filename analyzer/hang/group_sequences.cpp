#include "analyzer/hang/group_sequences.h"

#include <algorithm>

namespace osc::hang {

void addGroupCalls(const Capture& capture, const Process& p, const RankProgress& base,
                   std::map<std::string, CommunicatorProgress>& comms) {
    std::map<std::string, RankProgress> rankIn;  // by communicator id
    for (const GroupCall& g : p.groupCalls) {
        const std::string id = "pg " + std::string(capture.strings.at(g.group));
        CommunicatorProgress& comm = comms[id];
        comm.id = id;
        comm.source = g.seqFromOrder ? Source::PyTorchGroupOrder : Source::PyTorchSeq;
        comm.seqPerCollective = false;  // one Seq counts every collective type of the group
        comm.size = std::max(comm.size, g.groupSize);
        const auto [it, added] = rankIn.try_emplace(id, base);
        RankProgress& r = it->second;
        r.commRank = std::max(r.commRank, g.groupRank);
        Call c;
        c.slot = {"", g.seq};
        c.collective = std::string(capture.strings.at(g.collective));
        c.dtype = std::string(capture.strings.at(g.dtype));
        if (g.bytes > 0) c.bytes = g.bytes;
        c.enteredNs = g.entered;
        // An operator without its kernel launched work that never finished (or
        // the trace lost it): entered, not completed.
        c.evidence = g.gpuStart ? Evidence::Kernel : Evidence::Operator;
        c.gpuStartNs = g.gpuStart;
        c.completed = g.gpuStart && g.gpuEnd && *g.gpuEnd >= *g.gpuStart;
        if (c.completed) c.completedNs = g.gpuEnd;
        r.calls.push_back(std::move(c));
    }
    for (auto& [id, r] : rankIn) comms[id].ranks.push_back(std::move(r));
}

}  // namespace osc::hang

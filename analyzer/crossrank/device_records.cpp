#include "analyzer/crossrank/device_records.h"

#include "analyzer/metrics/alltoall.h"
#include "analyzer/metrics/bus_bandwidth.h"

#include <set>

namespace osc::crossrank {

std::vector<std::pair<uint64_t, int32_t>> commRanksOf(const DeviceAnalysis& d) {
    std::set<std::pair<uint64_t, int32_t>> comms;
    for (const auto& c : d.collectives)
        if (c.commHash && c.commRank >= 0) comms.emplace(*c.commHash, c.commRank);
    return {comms.begin(), comms.end()};
}

std::vector<P2pPartRecord> p2pRecordsOf(const DeviceAnalysis& d) {
    std::vector<P2pPartRecord> out;
    for (size_t i = 0; i < d.collectives.size(); ++i) {
        const auto& c = d.collectives[i];
        if (c.p2p.empty() && c.collective != "SendRecv") continue;
        P2pPartRecord r;
        r.op = static_cast<uint32_t>(i);
        r.hasCommHash = c.commHash.has_value();
        r.commHash = c.commHash.value_or(0);
        r.commRank = c.commRank;
        r.sendRecv = c.collective == "SendRecv";
        if (c.p2p.empty()) {
            r.parts = 0;
            out.push_back(r);
            continue;
        }
        for (const auto& part : c.p2p) {
            r.send = part.send;
            r.peer = part.peer;
            r.bytes = part.bytes;
            r.hasSeq = part.seq.has_value();
            r.seq = part.seq.value_or(0);
            out.push_back(r);
        }
    }
    return out;
}

std::vector<AllToAllRecord> allToAllRecordsOf(const DeviceAnalysis& d) {
    std::vector<AllToAllRecord> out;
    for (size_t i = 0; i < d.collectives.size(); ++i) {
        const auto& c = d.collectives[i];
        if (!c.allToAll) continue;
        const AllToAllBytes bytes = allToAllBytes(c);
        AllToAllRecord r;
        r.op = static_cast<uint32_t>(i);
        r.step = c.step;
        r.duration_ns = c.duration_ns;
        r.exposed_ns = c.exposed_ns;
        r.hasSent = bytes.sent.has_value();
        r.sent = bytes.sent.value_or(0);
        r.hasReceived = bytes.received.has_value();
        r.received = bytes.received.value_or(0);
        r.hasTotal = bytes.total.has_value();
        r.total = bytes.total.value_or(0);
        out.push_back(r);
    }
    return out;
}

std::vector<BandwidthRecord> bandwidthRecordsOf(const DeviceAnalysis& d) {
    std::vector<BandwidthRecord> out;
    out.reserve(d.collectives.size());
    for (const auto& c : d.collectives) {
        BandwidthRecord r;
        const auto bytes = busBytes(c);
        const auto factor = busFactor(c);
        r.hasBytes = bytes.has_value();
        r.busBytes = bytes.value_or(0);
        r.hasFactor = factor.has_value();
        r.factor = factor.value_or(0);
        r.exposed_ns = c.exposed_ns;
        r.step = c.step;
        r.allToAll = c.allToAll || c.collective == "AllToAll";
        out.push_back(r);
    }
    return out;
}

std::vector<OpRecord> opRecordsOf(const DeviceAnalysis& d, KeyTable& keys, bool alone) {
    std::vector<OpRecord> out;
    out.reserve(d.collectives.size());
    KeyTable::Device numbering(keys, d.collectives.size(), alone);
    for (const auto& c : d.collectives)
        out.push_back({numbering.key(c.collective, c.commHash, c.seqNumber), c.start_ns, c.end_ns});
    return out;
}

DeviceHeader headerOf(const DeviceAnalysis& d, const DeviceIntervals& iv) {
    DeviceHeader h;
    h.rank = d.rank;
    h.host = d.host;
    h.pid = d.pid;
    h.device = d.device;
    h.totals = d.totals;
    h.steps.reserve(d.steps.size());
    for (const auto& s : d.steps)
        h.steps.push_back({s.name, s.start_ns, s.end_ns, s.metrics.window_ns, s.metrics.comm_ns, s.metrics.overlap_ns,
                           s.metrics.exposed_comm_ns});
    h.commRanks = commRanksOf(d);
    h.microbatches = iv.microbatches;
    h.leadUps = static_cast<uint32_t>(iv.leadUps.size());
    h.gpu = d.gpu;
    h.gpuUuid = d.gpuUuid;
    for (const auto& c : d.collectives) {
        if (!c.p2p.empty())
            h.p2pRecords += static_cast<uint32_t>(c.p2p.size());
        else if (c.collective == "SendRecv")
            h.p2pRecords += 1;
        if (c.allToAll) h.alltoallOps += 1;
    }
    return h;
}

}  // namespace osc::crossrank

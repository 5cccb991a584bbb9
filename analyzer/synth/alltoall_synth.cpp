// The expert-parallel all-to-all model: every step runs gate, dispatch,
// expert GEMM, combine and output on every rank. An exchange starts on each
// rank when its previous kernel ends; the data moves once the last rank has
// arrived, and a rank's exchange ends alpha + max(bytes out, bytes in) /
// bandwidth after that. The hot rank receives `imbalance` times the tokens
// from everyone in the dispatch and sends them back in the combine.
#include "analyzer/capture/schema.h"
#include "analyzer/synth/host_emitter.h"
#include "analyzer/synth/kernel_names.h"
#include "analyzer/synth/p2p_numbering.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/rank_files.h"
#include "analyzer/synth/workload_spec.h"
#include "analyzer/synth/workload_synth.h"

#include <algorithm>
#include <stdexcept>

namespace osc::synth {
namespace {

constexpr std::string_view kGateName = "moe_gate_topk_kernel";
constexpr std::string_view kExpertName = "ampere_sgemm_128x64_nn";
constexpr std::string_view kCombineName = "moe_unpermute_kernel";

ProcessIdentity alltoallIdentity(const AllToAllSpec& spec, int rank) {
    return rankIdentity(spec.host, spec.basePid, rank, spec.ranks,
                        "synthetic expert-parallel all-to-all (" + std::to_string(spec.ranks) + " ranks)");
}

class AllToAllSimulation {
public:
    AllToAllSimulation(const AllToAllSpec& spec, const std::vector<RowSink*>& sinks) : spec_(spec), sinks_(sinks) {
        for (int r = 0; r < spec.ranks; ++r) who_.push_back(alltoallIdentity(spec, r));
        correlation_.assign(static_cast<size_t>(spec.ranks), 1);
    }

    void run() {
        TimeNs t = kFirstKernelNs;
        for (int step = 0; step < spec_.steps; ++step) t = runStep(step, t) + spec_.stepGapNs;
    }

private:
    // Bytes rank `from` sends rank `to` in the dispatch; the combine sends them back.
    uint64_t dispatchBytes(int from, int to) const {
        return to == spec_.hotRank && from != spec_.hotRank ? spec_.hotBytes() : spec_.pairBytes;
    }

    KernelRow kernel(int r, std::string_view name, TimeNs start, TimeNs end, uint32_t stream) {
        KernelRow k;
        const auto& who = who_[static_cast<size_t>(r)];
        k.deviceId = who.gpu.id;
        k.contextId = 1;
        k.correlationId = correlation_[static_cast<size_t>(r)]++;
        k.globalPid = schema::packGlobalPid(who.pid);
        k.start = start;
        k.end = end;
        k.streamId = stream;
        k.demangledName = name;
        k.shortName = name == kP2pName ? kP2pShortName : name;
        k.gridX = 132;
        k.gridY = 1;
        k.gridZ = 1;
        k.blockX = 256;
        k.blockY = 1;
        k.blockZ = 1;
        k.registersPerThread = 64;
        return k;
    }

    SynthLaunch computeLaunch(int r, std::string_view name, TimeNs start, TimeNs duration) {
        SynthLaunch l;
        l.kernel = kernel(r, name, start, start + duration, kComputeStream);
        return l;
    }

    // One exchange (combine: the dispatch reversed). `arrive[r]` is when rank
    // r's kernel starts; returns when each ends.
    std::vector<TimeNs> exchange(const std::vector<TimeNs>& arrive, bool combine, std::vector<StepLaunches>& launches) {
        const int R = spec_.ranks;
        const TimeNs last = *std::max_element(arrive.begin(), arrive.end());
        std::vector<TimeNs> end(static_cast<size_t>(R));
        for (int r = 0; r < R; ++r) {
            uint64_t out = 0, in = 0;
            std::vector<std::pair<int, uint64_t>> sends, receives;
            for (int p = 0; p < R; ++p) {
                if (p == r) continue;
                const uint64_t toPeer = combine ? dispatchBytes(p, r) : dispatchBytes(r, p);
                const uint64_t fromPeer = combine ? dispatchBytes(r, p) : dispatchBytes(p, r);
                out += toPeer;
                in += fromPeer;
                sends.emplace_back(p, toPeer);
                receives.emplace_back(p, fromPeer);
            }
            end[static_cast<size_t>(r)] = last + spec_.exchangeNs(std::max(out, in));
            SynthLaunch l;
            l.kernel = kernel(r, kP2pName, arrive[static_cast<size_t>(r)], end[static_cast<size_t>(r)], kCommStream);
            l.nccl = true;
            // Grouped calls: every send, then every receive, as ncclGroupStart/End issues them.
            for (int pass = 0; pass < 2; ++pass)
                for (const auto& [peer, bytes] : pass == 0 ? sends : receives) {
                    CollectiveRow c;
                    c.commHash = kCommHash;
                    c.rank = r;
                    c.nranks = R;
                    c.seqNumber = seq_.next(r, kCommHash, peer, pass == 0);
                    c.func = pass == 0 ? "Send" : "Recv";
                    c.datatype = "ncclBfloat16";
                    c.proto = "SIMPLE";
                    c.count = bytes / 2;
                    c.bytes = bytes;
                    c.root = peer;
                    c.nChannels = 1;
                    c.deviceId = l.kernel.deviceId;
                    c.gpuStart = l.kernel.start;
                    c.gpuEnd = l.kernel.end;
                    l.rows.push_back(c);
                }
            launches[static_cast<size_t>(r)].launches.push_back(std::move(l));
        }
        return end;
    }

    TimeNs runStep(int step, TimeNs t0) {
        const int R = spec_.ranks;
        std::vector<StepLaunches> launches(static_cast<size_t>(R));
        std::vector<TimeNs> cursor(static_cast<size_t>(R));
        for (int r = 0; r < R; ++r) {
            launches[static_cast<size_t>(r)].name = "step " + std::to_string(step);
            launches[static_cast<size_t>(r)].launches.push_back(computeLaunch(r, kGateName, t0, spec_.gateNs));
            cursor[static_cast<size_t>(r)] = t0 + spec_.gateNs;
        }
        cursor = exchange(cursor, false, launches);
        for (int r = 0; r < R; ++r) {
            auto& c = cursor[static_cast<size_t>(r)];
            launches[static_cast<size_t>(r)].launches.push_back(computeLaunch(r, kExpertName, c, spec_.expertNs));
            c += spec_.expertNs;
        }
        cursor = exchange(cursor, true, launches);
        TimeNs last = t0;
        for (int r = 0; r < R; ++r) {
            auto& c = cursor[static_cast<size_t>(r)];
            launches[static_cast<size_t>(r)].launches.push_back(computeLaunch(r, kCombineName, c, spec_.combineNs));
            c += spec_.combineNs;
            last = std::max(last, c);
        }
        for (int r = 0; r < R; ++r)
            emitStep(*sinks_[static_cast<size_t>(r)], who_[static_cast<size_t>(r)], launches[static_cast<size_t>(r)]);
        return last;
    }

    const AllToAllSpec& spec_;
    const std::vector<RowSink*>& sinks_;
    std::vector<ProcessIdentity> who_;
    std::vector<uint32_t> correlation_;
    P2pNumbering seq_;
};

}  // namespace

void generateAllToAll(const AllToAllSpec& spec, const std::vector<RowSink*>& sinks) {
    spec.validate();
    if (sinks.size() != static_cast<size_t>(spec.ranks))
        throw std::invalid_argument("synth: one sink per rank is needed");
    AllToAllSimulation(spec, sinks).run();
}

Capture synthesizeAllToAll(const AllToAllSpec& spec) {
    spec.validate();
    return synthesizeRanks(
        spec.ranks, spec.host, spec.basePid, [&](int r) { return alltoallIdentity(spec, r); },
        [&](const std::vector<RowSink*>& sinks) { generateAllToAll(spec, sinks); });
}

std::vector<std::string> writeAllToAll(const AllToAllSpec& spec, const std::string& out, bool overwrite) {
    spec.validate();
    return writeRankFiles(
        spec.ranks, spec.host, spec.basePid, out, overwrite, [&](int r) { return alltoallIdentity(spec, r); },
        [&](const std::vector<RowSink*>& sinks) { generateAllToAll(spec, sinks); });
}

}  // namespace osc::synth

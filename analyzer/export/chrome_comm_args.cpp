#include "analyzer/export/chrome_comm_args.h"

#include "analyzer/metrics/alltoall.h"
#include "analyzer/metrics/collectives.h"

#include <cstdio>

namespace osc {
namespace {

std::string list(const std::vector<uint64_t>& values) {
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
    return out + "]";
}

// A collective's size as PyTorch writes it on the kernel, in bytes (`dtype`
// Byte): NCCL's count is the input of most collectives and the output of a
// reduce-scatter; an all-gather's output and a reduce-scatter's input are n
// times it. Empty for collectives PyTorch's arguments do not describe so.
std::string collectiveArgs(const CollectiveInstance& op) {
    if (!op.bytes || op.commSize <= 0) return {};
    const uint64_t b = *op.bytes, n = static_cast<uint64_t>(op.commSize);
    const char* name = nullptr;
    uint64_t in = b, out = b;
    if (op.collective == "AllReduce") {
        name = "allreduce";
    } else if (op.collective == "AllGather") {
        name = "allgather";
        out = b * n;
    } else if (op.collective == "ReduceScatter") {
        name = "reduce_scatter";
        in = b * n;
    } else if (op.collective == "Broadcast") {
        name = "broadcast";
    } else if (op.collective == "Reduce") {
        name = "reduce";
    } else {
        return {};
    }
    return std::string(", \"Collective name\": \"") + name + "\", \"In msg nelems\": " + std::to_string(in) +
           ", \"Out msg nelems\": " + std::to_string(out) +
           ", \"dtype\": \"Byte\", \"Group size\": " + std::to_string(n);
}

}  // namespace

GlobalRanks globalRanksOf(const Capture& capture) {
    GlobalRanks out;
    for (const auto& p : capture.processes) {
        if (p.rank < 0) continue;
        const auto& t = p.collectives;
        for (size_t r = 0; r < t.size(); ++r)
            if (r < t.rank.size() && t.rank[r] >= 0) out.emplace(std::make_pair(t.commHash[r], t.rank[r]), p.rank);
    }
    return out;
}

std::unordered_map<size_t, std::string> commKernelArgs(const Capture& capture, const Process& process,
                                                       const Device& device, ActivityClassifier& classifier,
                                                       const GlobalRanks& ranks) {
    std::unordered_map<size_t, std::string> out;
    if (process.collectives.size() == 0) return out;
    // The analysis's own rule for which rows belong to which kernel.
    std::vector<CollectiveInstance> ops;
    const auto& k = device.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        const uint32_t nameId = kernelNameId(k, i);
        if (classifier.kernel(nameId) != Category::Communication) continue;
        CollectiveInstance op;
        op.collective = classifier.ncclName(nameId).collective;
        op.start_ns = k.start[i];
        op.end_ns = k.end[i];
        op.kernelIndex = i;
        ops.push_back(std::move(op));
    }
    attachPluginRows(capture, process, device, ops);
    markAllToAll(ops);
    for (const auto& op : ops) {
        if (op.p2p.empty()) {
            if (auto args = collectiveArgs(op); !args.empty()) out.emplace(op.kernelIndex, std::move(args));
            continue;
        }
        if (!op.commHash || op.commRank < 0 || op.commSize <= 0) continue;
        const uint64_t comm = *op.commHash;
        const auto n = static_cast<size_t>(op.commSize);
        // Global ranks of the communicator's members, when every one is known.
        std::vector<uint64_t> members;
        for (size_t r = 0; r < n && n <= 65536; ++r) {
            const auto it = ranks.find({comm, static_cast<int32_t>(r)});
            if (it == ranks.end()) break;
            members.push_back(static_cast<uint64_t>(it->second));
        }
        if (members.size() != n) continue;  // without the mapping a reader could not place the peers
        char hash[24];
        std::snprintf(hash, sizeof hash, "0x%016llx", static_cast<unsigned long long>(comm));
        std::string args = ", \"Process Group Name\": \"" + std::string(hash) + "\", \"Process Group Ranks\": \"" +
                           list(members) + "\", \"Group size\": " + std::to_string(n) + ", \"dtype\": \"Byte\"";
        const auto& first = op.p2p.front();
        if (op.p2p.size() == 1 && first.peer >= 0 && static_cast<size_t>(first.peer) < n) {
            args += std::string(", \"Collective name\": \"") + (first.send ? "send" : "recv") + "\", \"" +
                    (first.send ? "Dst Rank" : "Src Rank") +
                    "\": " + std::to_string(members[static_cast<size_t>(first.peer)]) +
                    ", \"In msg nelems\": " + std::to_string(first.bytes) +
                    ", \"Out msg nelems\": " + std::to_string(first.bytes);
        } else {
            // Bytes per group rank, each direction; PyTorch's split sizes, in bytes here.
            std::vector<uint64_t> in(n, 0), outBytes(n, 0);
            uint64_t inTotal = 0, outTotal = 0;
            for (const auto& part : op.p2p) {
                if (part.peer < 0 || static_cast<size_t>(part.peer) >= n) continue;
                (part.send ? in : outBytes)[static_cast<size_t>(part.peer)] += part.bytes;
                (part.send ? inTotal : outTotal) += part.bytes;
            }
            args += std::string(", \"Collective name\": \"") + (op.allToAll ? "all_to_allv" : "coalesced") +
                    "\", \"In msg nelems\": " + std::to_string(inTotal) +
                    ", \"Out msg nelems\": " + std::to_string(outTotal) + ", \"In split size\": \"" + list(in) +
                    "\", \"Out split size\": \"" + list(outBytes) + "\"";
        }
        out.emplace(op.kernelIndex, std::move(args));
    }
    return out;
}

}  // namespace osc

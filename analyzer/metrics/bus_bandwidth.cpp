#include "analyzer/metrics/bus_bandwidth.h"

#include <algorithm>
#include <cctype>

namespace osc {
namespace {

bool isAllToAll(const CollectiveInstance& op) { return op.allToAll || op.collective == "AllToAll"; }

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

std::optional<uint64_t> busBytes(const CollectiveInstance& op) {
    if (op.kernelIndex == static_cast<size_t>(-1)) return std::nullopt;  // copies: no bus factor describes them
    if (!op.p2p.empty()) {
        uint64_t sent = 0, received = 0;
        for (const auto& part : op.p2p) (part.send ? sent : received) += part.bytes;
        return std::max(sent, received);
    }
    if (!op.bytes) return std::nullopt;
    const std::string_view c = op.collective;
    if (c == "AllReduce" || c == "Broadcast" || c == "Reduce" || c == "SendRecv") return *op.bytes;
    if (c == "AllGather" || c == "ReduceScatter" || isAllToAll(op)) {
        if (op.commSize <= 0) return std::nullopt;
        return *op.bytes * static_cast<uint64_t>(op.commSize);
    }
    return std::nullopt;
}

std::optional<double> busFactor(std::string_view c, int n) {
    if (c == "Broadcast" || c == "Reduce" || c == "Send" || c == "Recv" || c == "SendRecv") return 1.0;
    if (n <= 0) return std::nullopt;
    const double ranks = static_cast<double>(n);
    if (c == "AllReduce") return 2.0 * (ranks - 1.0) / ranks;
    if (c == "AllGather" || c == "ReduceScatter" || c == "AllToAll") return (ranks - 1.0) / ranks;
    return std::nullopt;
}

std::optional<double> busFactor(const CollectiveInstance& op) {
    if (op.kernelIndex == static_cast<size_t>(-1)) return std::nullopt;
    return busFactor(isAllToAll(op) ? std::string_view("AllToAll") : std::string_view(op.collective), op.commSize);
}

std::optional<LinkPeak> linkOfGpu(std::string_view gpuName) {
    const std::string g = lower(gpuName);
    const bool pcie = has(g, "pcie");
    // Newest first: "GH200" holds "h200", "H100" boards name their memory.
    if (has(g, "b200") || has(g, "b100") || has(g, "gb200")) return LinkPeak{"NVLink 5 (Blackwell)", 900};
    if (has(g, "h200") || has(g, "gh200")) return LinkPeak{"NVLink 4 (H200)", 450};
    if (has(g, "h100")) {
        if (pcie) return LinkPeak{"PCIe 5.0 x16 (H100 PCIe)", 64};
        if (has(g, "nvl")) return LinkPeak{"NVLink 4 bridge (H100 NVL)", 300};
        return LinkPeak{"NVLink 4 (H100 SXM)", 450};
    }
    if (has(g, "h800")) return pcie ? LinkPeak{"PCIe 5.0 x16 (H800 PCIe)", 64} : LinkPeak{"NVLink 4 (H800 SXM)", 200};
    if (has(g, "h20")) return LinkPeak{"NVLink 4 (H20)", 450};
    if (has(g, "a100")) return pcie ? LinkPeak{"PCIe 4.0 x16 (A100 PCIe)", 32} : LinkPeak{"NVLink 3 (A100 SXM)", 300};
    if (has(g, "a800")) return pcie ? LinkPeak{"PCIe 4.0 x16 (A800 PCIe)", 32} : LinkPeak{"NVLink 3 (A800 SXM)", 200};
    if (has(g, "v100")) return pcie ? LinkPeak{"PCIe 3.0 x16 (V100 PCIe)", 16} : LinkPeak{"NVLink 2 (V100 SXM2)", 150};
    for (const char* board : {"l40", "l4", "a10", "a30", "a40", "rtx 6000 ada", "rtx a6000"})
        if (has(g, board)) return LinkPeak{"PCIe 4.0 x16", 32};
    if (has(g, "t4")) return LinkPeak{"PCIe 3.0 x16 (T4)", 16};
    return std::nullopt;
}

uint64_t sizeClassOf(uint64_t bytes) {
    if (bytes == 0) return 0;
    uint64_t c = 1;
    while (c <= bytes / 2) c *= 2;
    return c;
}

std::optional<double> lowerMedianOrNull(std::vector<double>& values) {
    if (values.empty()) return std::nullopt;
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

}  // namespace osc

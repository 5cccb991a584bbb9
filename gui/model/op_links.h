// For each communication operation of each analysed device, what the
// analyzer linked it to on other ranks: its matched group (the same
// collective, or an all-to-all exchange; Analysis::matched) and its
// point-to-point transfers (a send matched with its receive; Analysis::p2p,
// docs/metrics.md 7d). Built once per load, so a click finds a kernel's
// partners without scanning every match.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <cstdint>
#include <span>
#include <vector>

namespace osc::gui {

struct OpLinks {
    std::vector<int32_t> matched;         // per operation: index into Analysis::matched, or -1
    std::vector<uint32_t> transferBegin;  // per operation + 1: its range in `transfers` (empty: no p2p)
    std::vector<uint32_t> transfers;      // indices into Analysis::p2p

    int matchOf(size_t op) const { return op < matched.size() ? matched[op] : -1; }
    std::span<const uint32_t> transfersOf(size_t op) const {
        if (op + 1 >= transferBegin.size()) return {};
        return {transfers.data() + transferBegin[op], transfers.data() + transferBegin[op + 1]};
    }
};

// One per Analysis::devices entry.
std::vector<OpLinks> buildOpLinks(const Analysis& analysis);

// The operation of DeviceAnalysis `d` that is kernel row `kernelRow`
// (starting at `start`), or -1.
int opOfKernel(const DeviceAnalysis& d, uint32_t kernelRow, TimeNs start);

}  // namespace osc::gui

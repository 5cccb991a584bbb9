// What a selected communication kernel is linked to on other ranks, for the
// outlines, arrows and Details: the same collective (the analyzer's match),
// or, for a send or receive (NCCL's SendRecv kernel), the partner kernels it
// exchanged data with (docs/metrics.md 7d), each transfer with its direction
// and bytes. Without an analysis, collectives fall back to matching by
// position (TimelineModel::matchingCollectives).
#pragma once

#include "analyzer/metrics/analysis.h"
#include "gui/model/timeline_model.h"

#include <string>
#include <vector>

namespace osc::gui {

// An arrow from a sender's kernel to its receiver's, drawn at the moment
// both were there (the later start): the data moved from then on.
struct PeerLink {
    EventRef from, to;
    TimeNs at = 0;
    bool bothWays = false;  // the two kernels also moved data the other way
};

// One send or receive of the selected kernel (Analysis::p2p).
struct PeerTransfer {
    bool send = true;                        // the selected kernel sent (else received)
    int partnerDevice = -1, partnerOp = -1;  // into Analysis::devices / its collectives
    uint64_t bytes = 0;
    EventRef partner;  // where the partner kernel is drawn (invalid if hidden)
};

struct KernelLinks {
    int device = -1, op = -1;        // the selected kernel in the analysis, -1 when unknown
    int matched = -1;                // its group in Analysis::matched (a collective or an all-to-all exchange)
    std::vector<EventRef> partners;  // kernels on other ranks to outline, one per kernel
    std::vector<PeerLink> arrows;    // one per partner kernel of a send or receive
    std::vector<PeerTransfer> transfers;
    bool pointToPoint() const { return !transfers.empty(); }
};

// At most this many arrows (an all-to-all of many ranks links to each).
inline constexpr size_t kMaxPeerArrows = 64;

KernelLinks linkedKernels(const TimelineModel& model, const Analysis* analysis, EventRef ref);

// Per device of the analysis, the group showing it (TimelineModel::groupOf),
// or -1: from the groups annotate() numbered, in one pass, so that a
// thousand ranks are not a search of every group per device.
std::vector<int> groupsOfDevices(const TimelineModel& model, const Analysis& analysis);

// "rank 3 · GPU 0", or "host:pid · GPU 0" without a rank.
std::string deviceLabel(const DeviceAnalysis& d);

}  // namespace osc::gui

// Point-to-point communication across devices (docs/metrics.md section 7d):
// each send matched with its receive by communicator, peer and sequence
// number (or order, where the rows carry no usable numbers), and
// the all-to-all exchanges built from grouped sends and receives (7f).
#pragma once

#include "analyzer/metrics/analysis.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace osc {

// Marks the all-to-all operations of one device (CollectiveInstance::allToAll):
// an AllToAll collective (kernel name or plugin row), or a SendRecv kernel
// that sends to and receives from every other rank of a communicator of at
// least three ranks. With two ranks an exchange in both directions is a
// pipeline's fused send and receive as often as an all-to-all, so it is not
// called one.
void markAllToAll(std::vector<CollectiveInstance>& ops);

// (communicator hash, rank in it) -> device index, from the rows attached to
// each device's operations (the first device seen with that rank wins).
std::map<std::pair<uint64_t, int32_t>, int> devicesByCommRank(const Analysis& analysis);

// The rule of docs/metrics.md 7d for one route (communicator, sending
// device, receiving device), given the sequence numbers of its sends and of
// its receives, each side in its device's order: when every part carries a
// number and no number repeats on a side, a send pairs with the receive of
// the same number; otherwise the k-th send with the k-th receive. Returns
// (send index, receive index) pairs in send order; the parts in no pair
// are unmatched. One function for analyze() and the merge of partials, so
// the two cannot pair differently.
std::vector<std::pair<size_t, size_t>> pairRoute(const std::vector<std::optional<uint64_t>>& sends,
                                                 const std::vector<std::optional<uint64_t>>& receives);

// What matching left over, for one warning.
struct P2pLeftovers {
    size_t unmatchedParts = 0;   // sends or receives whose partner is not in the capture
    size_t kernelsWithoutPeers = 0;  // SendRecv kernels no row or trace argument describes
};

// Needs matchAcrossDevices first (it appends to Analysis::matched). Pairs,
// per communicator and ordered pair of devices, the sends of one with the
// receives of the other by pairRoute (SendRecv kernels only; a part whose peer is
// the device itself moves nothing between ranks and is skipped); fills
// Analysis::p2p. All-to-all SendRecv kernels linked by such pairs form one
// exchange: each is appended to Analysis::matched as an "AllToAll" group
// with pointToPoint set.
P2pLeftovers matchPointToPoint(Analysis& analysis);

// The warning for what matching left over; empty when nothing was left.
std::string p2pWarning(const P2pLeftovers& leftovers);

}  // namespace osc

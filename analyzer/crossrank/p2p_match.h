// Point-to-point across devices (docs/metrics.md 7d): each send paired with
// its receive by communicator, peer and sequence number (or order, where the
// rows carry no usable numbers), the all-to-all exchanges built from grouped
// sends and receives (7f), and where each one's waiting ends (4c). Pairing
// reads each device's sends and receives once; the pairs, exchanges and the
// point-to-point operations' times stay in memory (about 16 bytes per send
// or receive and 40 per matched pair): a job's point-to-point traffic, not
// its kernels.
#pragma once

#include "analyzer/crossrank/device_source.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace osc::crossrank {

// The rule of docs/metrics.md 7d for one route (communicator, sending
// device, receiving device), given the sequence numbers of its sends and of
// its receives, each side in its device's order: when every part carries a
// number and no number repeats on a side, a send pairs with the receive of
// the same number; otherwise the k-th send with the k-th receive. Returns
// (send index, receive index) pairs in send order; the parts in no pair
// are unmatched.
std::vector<std::pair<size_t, size_t>> pairRoute(const std::vector<std::optional<uint64_t>>& sends,
                                                 const std::vector<std::optional<uint64_t>>& receives);

// What pairing left over, for one warning.
struct P2pLeftovers {
    size_t unmatchedParts = 0;       // sends or receives whose partner is not in the capture
    size_t kernelsWithoutPeers = 0;  // SendRecv kernels no row or trace argument describes
};
// The warning for what pairing left over; empty when nothing was left.
std::string p2pWarning(const P2pLeftovers& leftovers);

// An all-to-all made of grouped sends and receives: one MatchedCollective
// with pointToPoint set. Devices are job-ordered device indices.
struct P2pExchange {
    std::vector<std::pair<int, int>> instances;  // (device, operation), first per device, device order
    std::pair<int, int> root;                    // its smallest linked operation: the order among equals
    std::optional<uint64_t> commHash;
    // In the devices' current clocks (P2pMatch::time).
    TimeNs firstStart = 0, lastStart = 0, firstEnd = 0;
    TimeNs second = 0;  // the second-latest start
    int lastDevice = -1, atLast = 0;
};

class P2pMatch {
public:
    // Reads every device's sends and receives and pairs them.
    explicit P2pMatch(const DeviceSource& source);

    // With each job device's shift to the job's clock: the pairs in time
    // order, the exchanges timed and ordered, and where each point-to-point
    // operation's waiting ends. Call again after the shifts change.
    void time(const std::function<TimeNs(size_t device)>& shiftOf);

    // Analysis::p2p.
    std::vector<P2pTransfer> transfers() const;
    // The exchanges in matched_collectives' order (by first start, then root).
    const std::vector<P2pExchange>& exchanges() const { return exchanges_; }
    // Index into exchanges() of the exchange whose instance (device, op) is, or -1.
    int exchangeOf(size_t device, uint32_t op) const;
    // The warning for what pairing left over ("" when nothing).
    std::string warning() const;
    // (communicator hash, rank) -> device: the first device with that rank.
    const std::map<std::pair<uint64_t, int32_t>, int>& deviceOf() const { return deviceOf_; }

    // Per job device, sorted by operation: the operations whose waiting ends
    // at a time known here (exchange instances at the exchange's last start,
    // paired sends and receives at their partners' arrival) - waiting is
    // [start, min(end, t)), transfer [max(start, t), end).
    const std::vector<std::pair<uint32_t, TimeNs>>& waitUntil(size_t device) const { return waitUntil_[device]; }
    // The device's SendRecv kernels that carry no peer, by operation index
    // (ascending): their waiting is unknown (docs/design.md section 5).
    const std::vector<uint32_t>& withoutPeer(size_t device) const { return withoutPeer_[device]; }
    // Last arrivals and the delay they caused, from exchanges and pairs.
    void addArrivals(std::vector<int>& lastArrivals, std::vector<TimeNs>& delayCaused) const;

private:
    struct Op {
        uint32_t op;
        TimeNs start, end;  // on the device's own timeline, before shifting
        bool allToAll;
        std::optional<uint64_t> commHash;
    };
    struct Pair {
        int sender;
        uint32_t senderOp;
        int receiver;
        uint32_t receiverOp;
        uint64_t bytes;
        std::optional<uint64_t> commHash;
    };
    const Op& opOf(int device, uint32_t op) const;
    TimeNs startOf(int device, uint32_t op) const;
    TimeNs endOf(int device, uint32_t op) const;
    void linkExchanges();

    std::vector<std::vector<Op>> ops_;  // per job device, by operation
    std::vector<Pair> pairs_;           // route order (communicator, sender, receiver), then k
    std::vector<uint32_t> timeOrder_;   // pairs_ by the send's start
    std::vector<P2pExchange> exchanges_;
    std::vector<std::vector<std::pair<uint32_t, int>>> exchangeOf_;  // per device: (op, exchange)
    std::vector<std::vector<std::pair<uint32_t, TimeNs>>> waitUntil_;
    std::vector<std::pair<int, TimeNs>> pairArrivals_;  // (device, delay) per linked pair that made one wait
    std::map<std::pair<uint64_t, int32_t>, int> deviceOf_;
    std::vector<TimeNs> shift_;
    size_t unmatchedParts_ = 0, kernelsWithoutPeers_ = 0;
    std::vector<std::vector<uint32_t>> withoutPeer_;
};

}  // namespace osc::crossrank

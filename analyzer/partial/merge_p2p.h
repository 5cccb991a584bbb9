// Point-to-point over partial results: matchPointToPoint (metrics/p2p.h,
// docs/metrics.md 7d) and what computeWaitTransfer takes from it, with the
// same answers, from the sends and receives each partial carries. Sends and
// receives pair by communicator, peer and sequence number or order
// (pairRoute), which each device knows alone, so pairing reads each device once; the pairs, exchanges and the
// point-to-point operations' times stay in memory (about 16 bytes per send
// or receive and 40 per matched pair): a job's point-to-point traffic, not
// its kernels.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/partial/part_set.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace osc::partial {

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
    // Reads every device's sends and receives (job order: `order[i]` is the
    // PartSet device of job device i) and pairs them.
    P2pMatch(const PartSet& parts, const std::vector<size_t>& order);

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
    // The warning analyze() gives for what pairing left over ("" when nothing).
    std::string warning() const;
    // (communicator hash, rank) -> job device: devicesByCommRank.
    const std::map<std::pair<uint64_t, int32_t>, int>& deviceOf() const { return deviceOf_; }

    // Per job device, sorted by operation: the operations whose waiting ends
    // at a time known here (exchange instances at the exchange's last start,
    // paired sends and receives at their partners' arrival) - waiting is
    // [start, min(end, t)), transfer [max(start, t), end).
    const std::vector<std::pair<uint32_t, TimeNs>>& waitUntil(size_t device) const { return waitUntil_[device]; }
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
};

}  // namespace osc::partial

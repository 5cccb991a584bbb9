// The Ranks panel (issue 30 item 3a): one row per collective matched across
// ranks (Analysis::matched), with what tells a slow rank apart on a job of
// hundreds of them: the arrival spread, who arrived last, how much of the
// ranks' time went to waiting for it and how much to moving data.
//
// Skew and transfer are the analyzer's (the report's matched table prints
// the same); waiting is each rank's part before the last arrival, split by
// the analyzer's own splitAtLastArrival, as Details splits one kernel.
#pragma once

#include "analyzer/metrics/analysis.h"

#include <optional>
#include <string>
#include <vector>

namespace osc::gui {

struct RankCollectiveRow {
    int matched = -1;  // into Analysis::matched
    std::string collective;
    std::string step;  // the step of the lowest device's instance; "" outside steps
    // The plugin's sequence number when known; else, with `bucket`, the
    // collective's place among the lowest device's operations of its step (1 = first).
    std::optional<uint64_t> seqNumber;
    int bucket = 0;
    std::optional<uint64_t> bytes;  // the ranks' largest, when any knows it
    // The communicator (process group) it ran on: the plugin's commHash, or
    // PyTorch's process group name hashed; none when matched by order.
    std::optional<uint64_t> commHash;
    int communicator = -1;  // into rankCommunicators()' list, -1 without a commHash
    int ranks = 0;
    TimeNs skew_ns = 0, transfer_ns = 0;  // MatchedCollective's
    // The device (into Analysis::devices) that started last; on a tie, the
    // first of them in the match's order.
    int lastDevice = -1;
    int lastRank = -1;       // its rank, -1 when unknown
    TimeNs waiting_ns = 0;   // summed over the ranks
    TimeNs rankTime_ns = 0;  // the ranks' durations summed: what waiting is a share of
    // Lower median over the ranks that have one (each rank's own transfer time).
    std::optional<double> busbw_gbps;
    TimeNs start_ns = 0, end_ns = 0;  // earliest start and latest end over the ranks
};

std::vector<RankCollectiveRow> rankCollectiveRows(const Analysis& analysis);

// One communicator (process group) of the rows, to show, group and filter by.
struct RankCommunicator {
    uint64_t hash = 0;
    std::vector<int> ranks;  // its members' ranks, sorted (devices without a rank left out)
    int collectives = 0;     // rows on it
    // "ranks 0–3", "ranks 0, 2" (rank_groups.h's rankSpan); with the hash
    // added when another communicator has the same members.
    std::string label;
};

// The rows' communicators, ordered by their lowest rank, then size, then
// hash (tensor-parallel {0,1} before data-parallel {0,2} only by the hash:
// both start at rank 0); sets each row's `communicator`.
std::vector<RankCommunicator> rankCommunicators(const Analysis& analysis, std::vector<RankCollectiveRow>& rows);

// The instance at (device, operation), as MatchedCollective::instances name
// them, or nullptr when either index is out of range.
const CollectiveInstance* instanceAt(const Analysis& analysis, std::pair<int, int> op);

}  // namespace osc::gui

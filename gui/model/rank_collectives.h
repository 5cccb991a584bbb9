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

}  // namespace osc::gui

// Pieces the hang text and JSON share (internal to osc_hang): names and
// times as the verdict prints them, each rank's last calls, the healthy
// headline and the --verbose tables.
#pragma once

#include "analyzer/hang/hang.h"

#include <string>
#include <string_view>
#include <vector>

namespace osc::hang {

// A name from a file, escaped and cut to one line.
std::string p(std::string_view text);
// "14:03:22.301 UTC" for a time on the inputs' timeline.
std::string wallClock(const HangAnalysis& a, TimeNs t);
// "rank 3", "ranks 3 and 5", "ranks 0-2, 4 and 6"
std::string rankList(std::vector<int> ranks);
// The rank a member is known by: its global rank, else its place in the communicator.
int shownRank(const RankProgress& r);
int shownRank(const StuckRank& s);
// A rank's newest call, or its newest completed one.
const Call* lastCall(const RankProgress& r, bool completedOnly);
// What a capture says the rank's host did last.
std::string hostSentence(const HangAnalysis& a, const RankProgress& r);
std::string healthyHeadline(const HangAnalysis& a);
// --verbose: per communicator, each rank's last entered and completed call and its evidence.
std::string progressTables(const HangAnalysis& a);

}  // namespace osc::hang

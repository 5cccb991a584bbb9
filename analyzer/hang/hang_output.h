// `overlapscope hang` output: a short verdict that says what to do (text,
// about 15 lines whatever the job's size), everything else with --verbose,
// and the whole analysis as JSON ("format": "overlapscope-hang", docs/cli.md).
#pragma once

#include "analyzer/hang/hang.h"

#include <string>
#include <vector>

namespace osc::hang {

inline constexpr int kHangJsonVersion = 1;

// The verdict: a headline naming every stuck rank of every group that
// waits, the collective and sequence number, who waits and since when;
// what each stuck rank last did (its status table, its last call and the
// program's line, what a joined capture says its GPU did); members absent
// from the inputs; sizes that may differ; where to look. Names from files
// are escaped (printable()).
std::vector<std::string> verdictLines(const HangAnalysis& analysis);

// Text: a title line and the verdict; with `verbose`, then per
// communicator each rank's progress and evidence, every desync and every
// warning.
std::string formatHangText(const HangAnalysis& analysis, bool verbose = false);

// Pretty-printed JSON, valid UTF-8 whatever the files held.
std::string formatHangJson(const HangAnalysis& analysis);

// The verdict as one paragraph (the GUI's Collective progress panel).
std::string hangParagraph(const HangAnalysis& analysis);

// The verdict's first line ("HANG: rank 1 never entered AllReduce #6 of
// ..."; several groups: "HANG: 3 groups wait for ranks 1 and 2."): the
// GUI's banner. The paragraph begins with it.
std::string hangHeadline(const HangAnalysis& analysis);

// "AllReduce #17" for a call in its communicator ("collective #17" when
// only a status table knows it).
std::string describeSlot(const CommunicatorProgress& comm, const SlotKey& slot, const std::string& collective);

}  // namespace osc::hang

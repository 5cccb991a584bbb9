// `overlapscope hang` output: one paragraph that says what to do (text), or
// the whole analysis as JSON ("format": "overlapscope-hang", docs/cli.md).
#pragma once

#include "analyzer/hang/hang.h"

#include <string>

namespace osc::hang {

inline constexpr int kHangJsonVersion = 1;

// The verdict paragraph, then per communicator each rank's last entered and
// completed collective. Names from files are escaped (printable()).
std::string formatHangText(const HangAnalysis& analysis);

// Pretty-printed JSON, valid UTF-8 whatever the files held.
std::string formatHangJson(const HangAnalysis& analysis);

// The paragraph alone (the text's first part; the GUI shows it too).
std::string hangParagraph(const HangAnalysis& analysis);

// The paragraph's first sentence, the verdict in one line ("HANG: rank 1
// never entered AllReduce #6 of communicator …, which rank 0 has waited in
// since …"): the GUI's banner.
std::string hangHeadline(const HangAnalysis& analysis);

// "AllReduce #17" for a call in its communicator.
std::string describeSlot(const CommunicatorProgress& comm, const SlotKey& slot, const std::string& collective);

}  // namespace osc::hang

// Text from files and from other processes (kernel and range names, paths,
// agent replies) made safe to show: a terminal must not receive escape
// sequences or other control bytes from a capture, and JSON must be valid
// UTF-8. The one place both rules live (report, check, diff, export,
// messages, and the agent client's replies).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace osc {

// Length of the well-formed UTF-8 sequence starting at text[i] (1 for
// ASCII), or 0 when the bytes there are not UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF included).
size_t utf8SequenceLength(std::string_view text, size_t i);

// Control characters (C0, DEL, C1), and bytes that are not UTF-8, become
// \xNN; everything else is kept. With keepLineBreaks, '\n' and '\t' are kept
// (for whole reports, whose lines and tables are ours).
std::string printable(std::string_view text, bool keepLineBreaks = false);

// printable() for one message line, cut after about `limit` bytes with
// "... (N bytes more)": a name from a file may be any length (30,000 digits).
std::string printableLine(std::string_view text, size_t limit = 6000);

}  // namespace osc

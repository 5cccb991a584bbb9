// What `overlapscope hang` (and overlapscope.hang() in Python) reads: its
// inputs sorted by content into captures and Flight Recorder dumps, a
// directory's files one by one, since a job's captures and its dumps often
// sit together.
#pragma once

#include <string>
#include <vector>

namespace osc::hang {

struct HangInputs {
    std::vector<std::string> captures, dumps;  // each file once, in the order named
};

// Throws CaptureError for partial results and saved reports (they hold no
// order of collectives) and for paths that cannot be read. A file of no
// known kind is a capture: its reader says what is wrong with it.
HangInputs sortHangInputs(const std::vector<std::string>& paths);

}  // namespace osc::hang

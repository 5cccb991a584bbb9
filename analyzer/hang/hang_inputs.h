// What `overlapscope hang` (and overlapscope.hang() in Python) reads: its
// inputs sorted by content into captures and Flight Recorder dumps, a
// directory's files one by one, since a job's captures and its dumps often
// sit together.
#pragma once

#include "analyzer/hang/rank_sequences.h"

#include <cstdint>
#include <functional>
#include <optional>
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

// The dumps' calls, each dump read on a worker thread and dropped once
// added (in the order given); times relative to a capture loaded beside
// them when there is one. `progress` after each file. Nothing when no dumps.
std::optional<JobSequences> readDumpSequences(const std::vector<std::string>& dumps,
                                              std::optional<int64_t> captureOriginUtcNs,
                                              const std::function<void(size_t done, size_t total)>& progress = {});

}  // namespace osc::hang

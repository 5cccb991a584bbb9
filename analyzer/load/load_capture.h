// Opens anything the analyzer reads, by content, not by file name:
// a SQLite capture (ours or an Nsight Systems export), a PyTorch profiler /
// Kineto Chrome trace (.json or .json.gz), or a directory of such files
// (one per rank), read as one multi-rank capture.
#pragma once

#include "analyzer/capture/load_options.h"
#include "analyzer/capture/model.h"

#include <string>
#include <vector>

namespace osc {

enum class InputFormat { Sqlite, KinetoJson, Unknown };

// Sniffs the first bytes. Throws CaptureError when the file cannot be read.
InputFormat detectFormat(const std::string& path);

// Loads and finalizes: tables sorted, processes aligned on one timeline
// (wall-clock session starts), ordered by rank. Throws CaptureError.
Capture loadCapture(const std::string& path, const LoadOptions& options = {});
Capture loadCaptures(const std::vector<std::string>& paths, const LoadOptions& options = {});

// The files loadCaptures(paths) reads, in its order: a directory becomes its
// capture files (.sqlite, .db, .json, .json.gz; not SQLite's side files),
// sorted by name. Throws CaptureError for a directory that holds none.
std::vector<std::string> captureFiles(const std::vector<std::string>& paths);

}  // namespace osc

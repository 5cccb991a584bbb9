// Opens anything the analyzer reads as a capture, by content (input_kind.h),
// not by file name: a SQLite capture (ours or an Nsight Systems export), a
// PyTorch profiler / Kineto Chrome trace (.json or .json.gz), or a directory
// of such files (one per rank), read as one multi-rank capture.
#pragma once

#include "analyzer/capture/load_options.h"
#include "analyzer/capture/model.h"

#include <string>
#include <vector>

namespace osc {

// Reads one capture file's processes into `capture` by its kind, with the
// reader of that format; neither checked (checkTimeRanges) nor finalized
// (finishLoading). Throws CaptureError naming the file, for other kinds of
// input too (a partial result, a saved report).
void readCaptureFile(const std::string& path, const LoadOptions& options, Capture& capture);

// Loads and finalizes: tables sorted, processes aligned on one timeline
// (wall-clock session starts), ordered by rank. Throws CaptureError.
Capture loadCapture(const std::string& path, const LoadOptions& options = {});
Capture loadCaptures(const std::vector<std::string>& paths, const LoadOptions& options = {});

// The files loadCaptures(paths) reads, in its order: a directory becomes its
// capture files (captureFilesIn). Throws CaptureError for a directory that
// holds none.
std::vector<std::string> captureFiles(const std::vector<std::string>& paths);

}  // namespace osc

// The one place that decides what an input is, by content, never by name:
// every command, the GUI and the job API ask sniff() and hand the path to
// the reader of that kind. A directory is one job: a capture file per rank,
// or partial results.
#pragma once

#include <string>
#include <vector>

namespace osc {

enum class InputKind {
    // An overlapscope capture or an Nsight Systems SQLite export: both are
    // SQLite files in Nsight's table layout, read by one reader.
    SqliteCapture,
    KinetoTrace,       // a PyTorch profiler (Kineto) Chrome trace, .json or .json.gz
    PartialResult,     // `report --partial`, or the agent's OVERLAPSCOPE_PARTIAL
    SavedReport,       // `report --format json`
    HangResult,        // `hang --format json`: a verdict, read by no command
    CaptureDirectory,  // a directory of captures (at least one capture file)
    PartialDirectory,  // a directory of partial results and no capture file
    // A PyTorch Flight Recorder dump (JSON or pickle): what each process
    // group's collectives did, read by `overlapscope hang` only.
    FlightRecorderDump,
    // A directory of Flight Recorder dumps and no capture file (PyTorch's
    // default names end in the rank, without an extension: nccl_trace_rank_3).
    FlightRecorderDirectory,
    Unknown,  // none of these: a directory without either, or other bytes
};

// What partial results and saved reports start with, and what partial
// result files are named (capture directories skip such files).
inline constexpr const char* kPartialMagic = "{\"format\":\"overlapscope-partial\"";
inline constexpr const char* kPartialFormat = "overlapscope-partial";
inline constexpr const char* kReportFormat = "overlapscope-report";
inline constexpr const char* kHangFormat = "overlapscope-hang";
inline constexpr const char* kPartialSuffix = ".partial.json";

// Opens without blocking (a FIFO would wait for a writer forever) and reads
// at most 4 KiB. Throws CaptureError naming the path when it is missing,
// unreadable, or neither a regular file nor a directory.
InputKind sniff(const std::string& path);

// "an Nsight Systems export or overlapscope capture", "a saved report", ...
std::string describe(InputKind kind);

// The capture files of a directory (.sqlite, .db, .json, .json.gz; not
// SQLite's side files, not partial results), and its partial results
// (*.partial.json), each sorted by name. Throws CaptureError when the
// directory cannot be listed.
std::vector<std::string> captureFilesIn(const std::string& directory);
std::vector<std::string> partialFilesIn(const std::string& directory);
// The Flight Recorder dumps of a directory, by content, sorted by name: its
// files whose names end in a number or in .json (PyTorch's names), at most
// the first 65,536 such names looked at.
std::vector<std::string> flightRecorderFilesIn(const std::string& directory);

}  // namespace osc

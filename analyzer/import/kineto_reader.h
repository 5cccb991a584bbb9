// Reads a PyTorch profiler (Kineto) Chrome trace, .json or .json.gz, into the
// capture model. Appends one Process to `capture`. See docs/formats.md.
#pragma once

#include "analyzer/capture/load_options.h"
#include "analyzer/capture/model.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace osc {

// Throws CaptureError naming the file and the problem.
void readKinetoTrace(const std::string& path, const LoadOptions& options, Capture& capture);

namespace kineto {

// How a trace is read. The file's content is read in place (trace_bytes.h)
// and its traceEvents array in pieces on several threads (kineto_pieces.h);
// a file that reader does not take the way the streaming parser
// (json_scanner.h, kineto_sax.h) would is read again by that parser, which
// then also names any problem in it. Both give the same capture.
struct ReadWays {
    size_t pieceBytes = size_t{1} << 19;
    int threads = 0;             // parsing threads; 0: as LoadOptions::threads says
    bool streamingOnly = false;  // the streaming parser alone (the reference, for tests)
    // Where given, told whether the in-place reader read the file (false:
    // the streaming parser did), so tests can see which one answered.
    bool* readInPlace = nullptr;
};

void readKinetoTrace(const std::string& path, const LoadOptions& options, Capture& capture, const ReadWays& ways);
// A trace already in memory (tests, fuzzers); `name` stands for its path.
void readKinetoText(std::string_view text, const std::string& name, const LoadOptions& options, Capture& capture,
                    const ReadWays& ways);

}  // namespace kineto
}  // namespace osc

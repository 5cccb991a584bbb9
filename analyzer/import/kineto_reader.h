// Reads a PyTorch profiler (Kineto) Chrome trace, .json or .json.gz, into the
// capture model. Appends one Process to `capture`. See docs/formats.md.
#pragma once

#include "analyzer/capture/load_options.h"
#include "analyzer/capture/model.h"

#include <string>

namespace osc {

// Throws CaptureError naming the file and the problem.
void readKinetoTrace(const std::string& path, const LoadOptions& options, Capture& capture);

}  // namespace osc

// One capture file's half of a job: read, finished as every load ends,
// analysed per device, and, where it must travel, written as a partial
// result. The reader is a parameter: the CLI and the GUI read every format
// (analyzer/load readCaptureFile); the agent, injected into training
// processes, reads only its own SQLite captures and must not bring the
// PyTorch trace reader (and ISA-L) along.
#pragma once

#include "analyzer/capture/load_options.h"
#include "analyzer/capture/model.h"
#include "analyzer/partial/file_part.h"

#include <iosfwd>
#include <string>

namespace osc::job {

// Reads one file's processes into a capture (not checked, not finalized).
using CaptureReader = void (*)(const std::string& path, const LoadOptions& options, Capture& capture);

// Throws CaptureError naming the file, LoadCancelled.
partial::FilePart analyzeCaptureFile(const std::string& path, const AnalysisSettings& settings, CaptureReader reader,
                                     const LoadOptions& options = {});

// The partial result of one capture file (header, its section, trailer):
// what `overlapscope report --partial FILE` writes and the agent writes
// beside its capture. `generator`: "overlapscope 0.1.0".
void writeCapturePartial(std::ostream& out, const std::string& path, const AnalysisSettings& settings,
                         CaptureReader reader, const std::string& generator);

}  // namespace osc::job

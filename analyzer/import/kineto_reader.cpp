// Placeholder until the Kineto importer lands (issue 4).
#include "analyzer/import/kineto_reader.h"

#include "analyzer/capture/capture_error.h"

namespace osc {

void readKinetoTrace(const std::string& path, const LoadOptions&, Capture&) {
    throw CaptureError(path, "PyTorch profiler traces are not supported yet");
}

}  // namespace osc

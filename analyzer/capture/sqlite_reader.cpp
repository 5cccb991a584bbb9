// Placeholder until the reader lands.
#include "analyzer/capture/sqlite_reader.h"

#include "analyzer/capture/capture_error.h"

namespace osc {
void readSqliteCapture(const std::string& path, const LoadOptions&, Capture&) {
    throw CaptureError(path, "SQLite captures are not supported yet");
}
}  // namespace osc

// Reads one SQLite capture: ours, or an Nsight Systems `nsys export --type
// sqlite` file (same table names; schema drift across versions handled).
// Appends one Process per process found in the file to `capture`.
#pragma once

#include "analyzer/capture/load_options.h"
#include "analyzer/capture/model.h"

#include <string>

namespace osc {

// Throws CaptureError naming the file: not SQLite, truncated, newer format
// version, no CUPTI_ACTIVITY_KIND_* table at all.
void readSqliteCapture(const std::string& path, const LoadOptions& options, Capture& capture);

}  // namespace osc

#include "analyzer/import/kineto_reader.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/import/gz_reader.h"
#include "analyzer/import/json_scanner.h"
#include "analyzer/import/kineto_builder.h"
#include "analyzer/import/kineto_group_calls.h"
#include "analyzer/import/kineto_sax.h"

#include <new>

namespace osc {

void readKinetoTrace(const std::string& path, const LoadOptions& options, Capture& capture) {
    GzReader reader(path);
    auto tick = [&] {
        if (options.cancelled()) throw LoadCancelled{};
        if (options.progress && reader.fileSize() > 0)
            options.progress(static_cast<double>(reader.fileBytesRead()) / static_cast<double>(reader.fileSize()),
                             "reading PyTorch trace");
    };
    const size_t firstProcess = capture.processes.size();
    kineto::CaptureBuilder builder(capture, path, tick);
    kineto::SaxHandler handler(builder, path);
    JsonScanner<GzReader, kineto::SaxHandler> scanner(reader, handler, path);
    try {
        scanner.parse();
    } catch (const kineto::FormatError& e) {
        // The handler and the builder know the file; only the scanner knows the line.
        throw CaptureError(path, "line " + std::to_string(scanner.line()) + ": " + e.problem());
    } catch (const std::bad_alloc&) {
        throw CaptureError(path, "out of memory while reading the trace");
    }
    if (!handler.sawTraceEvents()) throw CaptureError(path, "not a PyTorch profiler trace: no \"traceEvents\" array");
    builder.finish();
    kineto::numberCollectivesBySeq(capture, firstProcess);
    if (options.progress) options.progress(1.0, "reading PyTorch trace");
}

}  // namespace osc

// libFuzzer target: whatever loadCapture() opens (SQLite captures and nsys
// exports, Kineto .json and .json.gz) from arbitrary bytes written to a
// temporary file, then what every command does with a capture that loads:
// the analysis and the Chrome trace export. Bad input must end in
// CaptureError, never a crash or a sanitizer report (the metrics' arithmetic
// on hostile times included, issue 14 item 4).
#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <streambuf>
#include <string>

namespace {

// Counts what the export writes and keeps none of it.
struct NullBuffer : std::streambuf {
    int_type overflow(int_type c) override { return traits_type::not_eof(c); }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path = "/tmp/osc_fuzz_capture_" + std::to_string(::getpid());
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    osc::Capture capture;
    try {
        capture = osc::loadCapture(path);
    } catch (const osc::CaptureError&) {
        return 0;
    }
    (void)osc::analyze(capture);
    NullBuffer discard;
    std::ostream out(&discard);
    osc::writeChromeTrace(capture, out, {});
    return 0;
}

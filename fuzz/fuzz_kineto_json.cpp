// libFuzzer target: the Kineto JSON importer (scanner + event checks +
// model building) on arbitrary bytes held in memory. Bad input must end in
// CaptureError, never a crash, a hang or a sanitizer report.
#include "analyzer/capture/capture_error.h"
#include "analyzer/import/json_scanner.h"
#include "analyzer/import/kineto_builder.h"
#include "analyzer/import/kineto_sax.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

// Hands the input over in small pieces so tokens straddle chunk boundaries.
struct MemorySource {
    const uint8_t* data;
    size_t size;
    size_t at = 0;
    size_t read(char* into, size_t want) {
        const size_t n = std::min({want, size - at, size_t{7}});
        std::memcpy(into, data + at, n);
        at += n;
        return n;
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    osc::Capture capture;
    MemorySource source{data, size};
    osc::kineto::CaptureBuilder builder(capture, "fuzz.json", nullptr);
    osc::kineto::SaxHandler handler(builder, "fuzz.json");
    osc::JsonScanner<MemorySource, osc::kineto::SaxHandler> scanner(source, handler, "fuzz.json", 64);
    try {
        scanner.parse();
        if (handler.sawTraceEvents()) {
            builder.finish();
            capture.alignProcesses();
            capture.finalize();
        }
    } catch (const osc::CaptureError&) {  // JsonSyntaxError and kineto::FormatError too
    }
    return 0;
}

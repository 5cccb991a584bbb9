// libFuzzer target: the Kineto JSON importer on arbitrary bytes held in
// memory, both ways it reads: the in-place reader that parses the
// traceEvents array in pieces on two threads (what readKinetoTrace runs), and
// the streaming reference (scanner + event checks + model building), fed 7
// bytes at a time so tokens straddle its chunks. Bad input must end in
// CaptureError, never a crash, a hang or a sanitizer report; and the two must
// agree exactly, on the model (every field) or on the error message.
#include "analyzer/capture/capture_error.h"
#include "analyzer/import/json_scanner.h"
#include "analyzer/import/kineto_builder.h"
#include "analyzer/import/kineto_group_calls.h"
#include "analyzer/import/kineto_reader.h"
#include "analyzer/import/kineto_sax.h"
#include "tests/analyzer/capture_dump.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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

// The streaming reader as readKinetoTrace runs it, on a 64-byte buffer.
std::string streaming(const uint8_t* data, size_t size) {
    osc::Capture capture;
    MemorySource source{data, size};
    osc::kineto::CaptureBuilder builder(capture, "fuzz.json", nullptr);
    osc::kineto::SaxHandler handler(builder, "fuzz.json");
    osc::JsonScanner<MemorySource, osc::kineto::SaxHandler> scanner(source, handler, "fuzz.json", 64);
    try {
        try {
            scanner.parse();
        } catch (const osc::kineto::FormatError& e) {
            throw osc::CaptureError("fuzz.json", "line " + std::to_string(scanner.line()) + ": " + e.problem());
        }
        if (!handler.sawTraceEvents())
            throw osc::CaptureError("fuzz.json", "not a PyTorch profiler trace: no \"traceEvents\" array");
        builder.finish();
        osc::kineto::numberCollectivesBySeq(capture, 0);
        capture.alignProcesses();
        capture.finalize();
    } catch (const osc::CaptureError& e) {  // JsonSyntaxError too
        return std::string("error: ") + e.what();
    }
    return osc::testing::dumpCapture(capture);
}

std::string inPlace(const uint8_t* data, size_t size) {
    osc::Capture capture;
    osc::kineto::ReadWays ways;
    ways.pieceBytes = 1 + size % 61;  // cuts nearly everywhere
    ways.threads = 2;
    try {
        osc::kineto::readKinetoText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", {},
                                    capture, ways);
        capture.alignProcesses();
        capture.finalize();
    } catch (const osc::CaptureError& e) {
        return std::string("error: ") + e.what();
    }
    return osc::testing::dumpCapture(capture);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string reference = streaming(data, size);
    const std::string got = inPlace(data, size);
    if (got != reference) {
        std::fprintf(stderr,
                     "the in-place reader disagrees with the streaming one:\n--- streaming\n%s\n--- in place\n%s\n",
                     reference.c_str(), got.c_str());
        std::abort();
    }
    return 0;
}

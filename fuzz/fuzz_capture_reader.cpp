// libFuzzer target: whatever loadCapture() opens (SQLite captures and nsys
// exports, Kineto .json and .json.gz) from arbitrary bytes written to a
// temporary file. Bad input must end in CaptureError, never a crash.
#include "analyzer/capture/capture_error.h"
#include "analyzer/load/load_capture.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path = "/tmp/osc_fuzz_capture_" + std::to_string(::getpid());
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    try {
        const osc::Capture capture = osc::loadCapture(path);
        (void)capture.kernelCount();
    } catch (const osc::CaptureError&) {
    }
    return 0;
}

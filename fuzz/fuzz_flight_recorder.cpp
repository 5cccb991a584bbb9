// libFuzzer target: a PyTorch Flight Recorder dump from arbitrary bytes, a
// pickle (first byte 0x80: our data-only pickle machine) or JSON, read into
// its entries, turned into sequences and analysed, the verdict written as
// text and JSON. Bad input must end in CaptureError: never a crash, a hang,
// unbounded memory, a sanitizer report, or code run from the pickle.
#include "analyzer/capture/capture_error.h"
#include "analyzer/hang/flight_recorder.h"
#include "analyzer/hang/hang.h"
#include "analyzer/hang/hang_output.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        // Small pieces, so that values straddle the readers' refills.
        std::vector<osc::FlightRecorderDump> dumps;
        dumps.push_back(osc::readFlightRecorderDumpBytes(bytes, "fuzz/nccl_trace_rank_1", 7));
        // A second rank whose dump is the same: the cross-rank half has two ranks to compare.
        dumps.push_back(dumps.front());
        dumps.back().rank = 0;
        const osc::hang::HangAnalysis a = osc::hang::analyzeHang(nullptr, dumps);
        (void)osc::hang::formatHangText(a, true);
        (void)osc::hang::formatHangJson(a);
    } catch (const osc::CaptureError&) {}
    return 0;
}

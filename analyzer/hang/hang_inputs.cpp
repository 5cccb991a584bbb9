#include "analyzer/hang/hang_inputs.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/load/input_kind.h"

#include <set>

namespace osc::hang {
namespace {

[[noreturn]] void notForHang(const std::string& path, const std::string& what) {
    throw CaptureError(path, what +
                                 ", which holds no order of collectives: `hang` reads captures (ours, Nsight "
                                 "Systems exports, PyTorch traces) and PyTorch Flight Recorder dumps");
}

}  // namespace

HangInputs sortHangInputs(const std::vector<std::string>& paths) {
    HangInputs in;
    std::set<std::string> seen;
    const auto addFile = [&](const std::string& f, InputKind kind) {
        if (!seen.insert(f).second) return;
        (kind == InputKind::FlightRecorderDump ? in.dumps : in.captures).push_back(f);
    };
    for (const auto& path : paths) {
        const InputKind kind = sniff(path);
        switch (kind) {
            case InputKind::SqliteCapture:
            case InputKind::KinetoTrace:
            case InputKind::FlightRecorderDump:
            case InputKind::Unknown:  // the capture reader says what is wrong with it
                addFile(path, kind);
                break;
            case InputKind::CaptureDirectory:
            case InputKind::FlightRecorderDirectory:
                for (const auto& f : captureFilesIn(path)) addFile(f, sniff(f));
                for (const auto& f : flightRecorderFilesIn(path)) addFile(f, InputKind::FlightRecorderDump);
                break;
            case InputKind::PartialResult:
            case InputKind::PartialDirectory:
                notForHang(path, "partial results");
            case InputKind::SavedReport:
                notForHang(path, "a saved report");
            case InputKind::HangResult:
                throw CaptureError(path,
                                   "an overlapscope hang result (hang --format json): give `hang` the captures or "
                                   "Flight Recorder dumps it was made from");
        }
    }
    return in;
}

std::optional<JobSequences> readDumpSequences(const std::vector<std::string>& dumps,
                                              std::optional<int64_t> captureOriginUtcNs,
                                              const std::function<void(size_t done, size_t total)>& progress) {
    if (dumps.empty()) return std::nullopt;
    FlightRecorderSequences sequences(captureOriginUtcNs);
    sequences.addFiles(dumps, 0, progress);
    return sequences.finish();
}

}  // namespace osc::hang

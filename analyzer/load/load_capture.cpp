#include "analyzer/load/load_capture.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/sqlite_reader.h"
#include "analyzer/capture/time_range.h"
#include "analyzer/import/kineto_reader.h"
#include "analyzer/load/input_kind.h"

#include <filesystem>

namespace osc {
namespace {

[[noreturn]] void noCaptureFiles(const std::string& directory) {
    throw CaptureError(directory, "directory holds no capture files (.sqlite, .json, .json.gz)");
}

// The same capture given twice (or a copy of it) would count its devices
// twice: a process is its host, pid, rank and wall-clock time 0 (one captured
// again after a detach has another time 0, and is not a copy; PyTorch traces
// often lack the host and give every rank pid 0).
void refuseRepeatedProcesses(const Capture& capture, size_t before, const std::string& file) {
    for (size_t i = before; i < capture.processes.size(); ++i) {
        const Process& p = capture.processes[i];
        for (size_t k = 0; k < before; ++k) {
            const Process& q = capture.processes[k];
            if (q.host != p.host || q.pid != p.pid || q.rank != p.rank || q.sessionStartUtcNs != p.sessionStartUtcNs)
                continue;
            if (q.sourcePath == file)
                throw CaptureError(file, "given twice; its devices would be counted twice (give each capture once)");
            throw CaptureError(file, "process " + p.host + " pid " + std::to_string(p.pid) + " is also in " +
                                         q.sourcePath +
                                         " (the same data given twice would be counted twice; give each capture "
                                         "once)");
        }
    }
}

}  // namespace

void readCaptureFile(const std::string& path, const LoadOptions& options, Capture& capture) {
    switch (sniff(path)) {
        case InputKind::SqliteCapture:
            readSqliteCapture(path, options, capture);
            break;
        case InputKind::KinetoTrace:
            readKinetoTrace(path, options, capture);
            break;
        case InputKind::PartialResult:
            throw CaptureError(path,
                               "a partial result (report --partial), not a capture: give it to `overlapscope "
                               "merge` (`check` and `diff` take it too); `export` and `whatif` need the captures");
        case InputKind::SavedReport:
            throw CaptureError(path,
                               "a saved report (report --format json), not a capture: `check` and `diff` "
                               "read it; `export` and `whatif` need the captures");
        case InputKind::HangResult:
            throw CaptureError(path,
                               "an overlapscope hang result (hang --format json), not a capture: it holds a verdict, "
                               "not the collectives; give the captures or dumps it was made from");
        case InputKind::FlightRecorderDump:
            throw CaptureError(path,
                               "a PyTorch Flight Recorder dump, not a capture: `overlapscope hang` reads it (which "
                               "rank a hung job waits for)");
        case InputKind::CaptureDirectory:
        case InputKind::PartialDirectory:
        case InputKind::FlightRecorderDirectory:
            throw CaptureError(path, "is a directory, not a capture file");
        case InputKind::Unknown:
            throw CaptureError(path,
                               "not a capture: expected a SQLite capture, an Nsight Systems "
                               "SQLite export or a PyTorch profiler trace (.json/.json.gz)");
    }
}

namespace {

// PyTorch traces number their collectives by Seq, or (without it) each
// trace reader numbers a group's calls in trace order. Traces of one job
// come from one PyTorch; where they do not, the two numberings of a group
// match nothing, which the user should hear rather than infer.
void warnMixedNumbering(Capture& capture) {
    bool bySeq = false, byOrder = false;
    for (const Process& p : capture.processes)
        for (const GroupCall& g : p.groupCalls) (g.seqFromOrder ? byOrder : bySeq) = true;
    if (bySeq && byOrder)
        capture.warnings.push_back(
            "some PyTorch traces number their collectives by \"Seq\" and some do not (different PyTorch "
            "versions?): their collectives are not matched across ranks");
}

}  // namespace

Capture loadCaptures(const std::vector<std::string>& paths, const LoadOptions& options) {
    Capture capture;
    std::vector<std::pair<std::string, std::string>> files;  // (as given, file)
    for (const auto& p : paths)
        for (const auto& f : captureFiles({p})) files.emplace_back(p, f);
    for (const auto& p : paths) capture.sourcePaths.push_back(p);
    for (size_t i = 0; i < files.size(); ++i) {
        const std::string& f = files[i].second;
        // Several files: one fraction over all of them, and which file this is.
        LoadOptions one = options;
        if (files.size() > 1 && options.progress)
            one.progress = [&, i](double fraction, std::string_view stage) {
                const std::string label =
                    "file " + std::to_string(i + 1) + "/" + std::to_string(files.size()) + ", " + std::string(stage);
                options.progress((static_cast<double>(i) + fraction) / static_cast<double>(files.size()), label);
            };
        const size_t before = capture.processes.size();
        readCaptureFile(f, one, capture);
        checkTimeRanges(capture, before, f);
        refuseRepeatedProcesses(capture, before, f);
    }
    warnMixedNumbering(capture);
    finishLoading(capture);
    return capture;
}

std::vector<std::string> captureFiles(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& path : paths) {
        std::error_code ec;
        if (!std::filesystem::is_directory(path, ec)) {
            out.push_back(path);  // reading it says what is wrong, if anything
            continue;
        }
        const auto files = captureFilesIn(path);
        if (files.empty()) noCaptureFiles(path);
        out.insert(out.end(), files.begin(), files.end());
    }
    return out;
}

Capture loadCapture(const std::string& path, const LoadOptions& options) { return loadCaptures({path}, options); }

}  // namespace osc

#include "analyzer/pipeline/analyze_inputs.h"

#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/wait_transfer.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <exception>
#include <mutex>
#include <thread>
#include <tuple>

namespace osc {
namespace {

// What one file leaves behind once its capture is freed.
struct FilePart {
    Analysis analysis;  // devices with processIndex into this file's processes
    std::vector<DeviceIntervals> intervals;
    std::vector<int> warningProcess;
    struct Who {
        int rank;
        std::string host;
        int64_t pid;
    };
    std::vector<Who> processes;
    int64_t originUtcNs = 0;
    std::vector<std::string> loadWarnings;
    std::exception_ptr error;
};

FilePart analyzeFile(const std::string& file, const AnalysisSettings& settings, const LoadOptions& load) {
    FilePart part;
    const Capture capture = loadCaptures({file}, load);
    AnalysisSettings perFile = settings;
    perFile.alignCollectives = false;  // a cross-process step: done after the merge
    analyzeProcesses(capture, perFile, part.analysis, part.intervals, &part.warningProcess);
    for (const auto& p : capture.processes) part.processes.push_back({p.rank, p.host, p.pid});
    part.originUtcNs = capture.originUtcNs;
    part.loadWarnings = capture.warnings;
    return part;
}

// Capture::finalize's process order: known ranks first, by rank, then host, pid.
bool before(const FilePart::Who& a, const FilePart::Who& b) {
    const bool ar = a.rank >= 0, br = b.rank >= 0;
    if (ar != br) return ar;
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.host != b.host) return a.host < b.host;
    return a.pid < b.pid;
}

std::vector<FilePart> analyzeFiles(const std::vector<std::string>& files, const AnalysisSettings& settings,
                                   const PipelineOptions& options) {
    std::vector<FilePart> parts(files.size());
    int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    jobs = std::min<int>(jobs, static_cast<int>(files.size()));
    LoadOptions load = options.load;
    load.progress = nullptr;  // per-file fractions from several threads mean nothing together
    std::atomic<size_t> next{0}, done{0};
    std::atomic<bool> failed{false};
    std::mutex progressMutex;
    auto work = [&] {
        for (;;) {
            if (failed.load() || load.cancelled()) return;
            const size_t i = next.fetch_add(1);
            if (i >= files.size()) return;
            try {
                parts[i] = analyzeFile(files[i], settings, load);
            } catch (...) {
                parts[i].error = std::current_exception();
                failed.store(true);
                return;
            }
            const size_t n = done.fetch_add(1) + 1;
            if (options.progress) {
                std::lock_guard lock(progressMutex);
                options.progress(n, files.size(), files[i]);
            }
        }
    };
    if (jobs <= 1) {
        work();
    } else {
        std::vector<std::thread> threads;
        for (int t = 0; t < jobs; ++t) threads.emplace_back(work);
        for (auto& t : threads) t.join();
    }
    // Workers take files in order, so every file before a failing one was
    // read too: the first error in order is the one loadCaptures would throw.
    for (const auto& p : parts)
        if (p.error) std::rethrow_exception(p.error);
    if (load.cancelled()) throw LoadCancelled{};
    return parts;
}

}  // namespace

AnalyzedInputs analyzeInputs(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                             const PipelineOptions& options) {
    AnalyzedInputs out;
    out.files = captureFiles(paths);
    std::vector<FilePart> parts = analyzeFiles(out.files, settings, options);

    // One timeline, as Capture::alignProcesses makes it: each file's times
    // are relative to its own earliest session start, the job's to the
    // earliest of all.
    int64_t origin = INT64_MAX;
    for (const auto& p : parts)
        if (!p.processes.empty()) origin = std::min(origin, p.originUtcNs);

    // The processes in Capture::finalize's order over all files.
    struct Slot {
        size_t file;
        int process;
    };
    std::vector<Slot> order;
    for (size_t f = 0; f < parts.size(); ++f)
        for (size_t p = 0; p < parts[f].processes.size(); ++p) order.push_back({f, static_cast<int>(p)});
    std::stable_sort(order.begin(), order.end(), [&](const Slot& a, const Slot& b) {
        return before(parts[a.file].processes[static_cast<size_t>(a.process)],
                      parts[b.file].processes[static_cast<size_t>(b.process)]);
    });

    Analysis& a = out.analysis;
    a.settings = settings;
    std::vector<DeviceIntervals> intervals;
    for (size_t g = 0; g < order.size(); ++g) {
        FilePart& part = parts[order[g].file];
        const TimeNs delta = part.originUtcNs - origin;
        for (size_t d = 0; d < part.analysis.devices.size(); ++d) {
            DeviceAnalysis& dev = part.analysis.devices[d];
            if (dev.processIndex != order[g].process) continue;
            shiftDeviceTimes(dev, delta, &part.intervals[d]);
            dev.processIndex = static_cast<int>(g);
            a.devices.push_back(std::move(dev));
            intervals.push_back(std::move(part.intervals[d]));
        }
        for (size_t w = 0; w < part.analysis.warnings.size(); ++w)
            if (part.warningProcess[w] == order[g].process) a.warnings.push_back(part.analysis.warnings[w]);
    }
    for (const auto& p : parts) {
        out.loadWarnings.insert(out.loadWarnings.end(), p.loadWarnings.begin(), p.loadWarnings.end());
        a.droppedRecords += p.analysis.droppedRecords;
    }
    finishAnalysis(a, intervals, order.size());
    return out;
}

}  // namespace osc

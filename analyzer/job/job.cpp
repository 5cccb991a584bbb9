#include "analyzer/job/job.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/job/file_workers.h"
#include "analyzer/load/input_kind.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/device_codec.h"
#include "analyzer/partial/merge.h"
#include "analyzer/partial/part_set.h"
#include "analyzer/report/report_assembler.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

namespace osc::job {
namespace {

void warn(const JobProgress& p, const std::vector<std::string>& warnings) {
    if (p.warnings) p.warnings(warnings);
}

void count(const JobProgress& p, std::string_view verb, size_t done, size_t total) {
    if (p.counted) p.counted(verb, done, total);
}

bool cancelled(const JobProgress& p) { return p.cancel && p.cancel->load(std::memory_order_relaxed); }

// A report names the capture files that saved nothing (Capture::savedNothing)
// among `files` inputs; when they are all of them it has nothing to say, and
// refuses the job in one line (before the readers' warnings, which would say
// it once more).
void reportSavedNothing(const std::vector<std::string>& savedNothing, size_t files, report::ReportOptions& report) {
    if (!savedNothing.empty() && savedNothing.size() >= files) {
        if (savedNothing.size() == 1)
            throw std::invalid_argument(savedNothingWarning(savedNothing[0]) + "; nothing to report");
        std::string names;
        for (const auto& f : savedNothing) names += (names.empty() ? "" : ", ") + f;
        throw std::invalid_argument(names +
                                    ": every capture did not finish and saved nothing (killed, or the disk "
                                    "filled up, before any GPU activity was committed); nothing to report");
    }
    for (const auto& f : savedNothing) report.inputWarnings.push_back(savedNothingWarning(f));
}

// How a job loads a capture it only analyses, then drops: the launch's
// shape and nothing else the analysis does not read.
LoadOptions analysisLoad(const JobRequest& request, const JobProgress& progress) {
    LoadOptions options;
    options.launchDetails = request.launchDetails;
    options.launchShapeOnly = true;
    options.analysisOnly = true;
    options.cancel = progress.cancel;
    return options;
}

// One capture in memory: read with progress, then analysed. With `report`:
// for a report, which names a capture that saved nothing.
Analysis analyzeInMemory(const JobInputs& inputs, const JobRequest& request, const JobProgress& progress,
                         report::ReportOptions* report = nullptr) {
    LoadOptions options = analysisLoad(request, progress);
    options.progress = progress.loading;
    Capture capture = loadCaptures(inputs.paths, options);
    if (progress.status) progress.status("");
    if (report) reportSavedNothing(capture.savedNothing, captureFiles(inputs.paths).size(), *report);
    warn(progress, capture.warnings);
    if (progress.status) progress.status("analyzing");
    Analysis analysis = analyze(std::move(capture), request.settings);
    if (progress.status) progress.status("");
    warn(progress, analysis.warnings);
    return analysis;
}

FileWorkerOptions workerOptions(const JobRequest& request, const JobProgress& progress) {
    FileWorkerOptions o;
    o.jobs = request.jobs;
    o.reader = readCaptureFile;
    o.load = analysisLoad(request, progress);
    o.progress = [&progress](size_t done, size_t total, const std::string&) {
        count(progress, "analyzing", done, total);
    };
    if (progress.reading) o.reading = progress.reading;
    return o;
}

// Several captures or partials as one PartSet: captures are analysed file by
// file first. `files` keeps the captures' scratch files alive for as long as
// `set` is used. `keepDevices`: the caller keeps every device (mergedAnalysis),
// so the set holds file parts' devices as decoded (FileWorkerOptions::keepDevices).
// With `report`: as analyzeInMemory's.
void partsOf(const JobInputs& inputs, const JobRequest& request, const JobProgress& progress, partial::PartSet& set,
             std::unique_ptr<AnalyzedFiles>& files, bool keepDevices, report::ReportOptions* report = nullptr) {
    if (inputs.kind == JobKind::Partials) {
        for (size_t i = 0; i < inputs.paths.size(); ++i) {
            if (cancelled(progress)) throw LoadCancelled{};
            count(progress, "reading", i, inputs.paths.size());
            set.addPartialFile(inputs.paths[i]);
        }
        count(progress, "reading", inputs.paths.size(), inputs.paths.size());
    } else {
        // Captures analysed, or file parts (Dask's) decoded, on the job's
        // threads; the set filled on this one as they finish.
        FileWorkerOptions o = workerOptions(request, progress);
        o.partsGiven = inputs.kind == JobKind::FileParts;
        o.keepDevices = keepDevices;  // parts' devices only (FileWorkerOptions::keepDevices)
        files = std::make_unique<AnalyzedFiles>(inputs.paths, request.settings, o, set, inputs.paths);
    }
    if (progress.status) progress.status("");
    if (report) reportSavedNothing(set.savedNothing(), set.files.size(), *report);
    warn(progress, set.loadWarnings());
}

// One capture, or a saved report, for a report.
Analysis analyzeForReport(const JobInputs& inputs, const JobRequest& request, const JobProgress& progress,
                          report::ReportOptions& report) {
    return inputs.kind == JobKind::Captures ? analyzeInMemory(inputs, request, progress, &report)
                                            : analyzeJob(inputs, request, progress);
}

}  // namespace

partial::MergeOptions mergeOptions(const JobRequest& request, const JobProgress& progress) {
    partial::MergeOptions o;
    o.threads = request.jobs;
    o.alignCollectives = request.align;
    o.peakBusBwGbps = request.settings.peakBusBwGbps;
    o.progress = [&progress](size_t done, size_t total) {
        if (cancelled(progress)) throw LoadCancelled{};
        count(progress, "merging", done, total);
    };
    return o;
}

std::vector<std::string> partialFiles(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& p : paths) {
        std::error_code ec;
        if (std::filesystem::is_directory(p, ec)) {
            const auto found = partialFilesIn(p);
            if (found.empty()) throw CaptureError(p, "directory holds no partial results (*.partial.json)");
            out.insert(out.end(), found.begin(), found.end());
        } else {
            out.push_back(p);
        }
    }
    return out;
}

std::vector<std::string> partialInputs(const std::vector<std::string>& files) {
    std::vector<std::string> out;
    for (const auto& f : files) {
        try {
            if (sniff(f) != InputKind::PartialResult) continue;  // the merge names the problem
        } catch (const CaptureError&) {
            continue;
        }
        std::ifstream in(f, std::ios::binary);
        std::string header;
        std::getline(in, header);
        const auto j = nlohmann::json::parse(header, nullptr, false);
        if (j.is_object() && j.contains("inputs") && j["inputs"].is_array())
            for (const auto& i : j["inputs"])
                if (i.is_string()) out.push_back(i.get<std::string>());
    }
    return out;
}

JobInputs classifyJob(const std::vector<std::string>& paths) {
    size_t partials = 0, reports = 0;
    for (const auto& p : paths) {
        InputKind kind = InputKind::Unknown;
        try {
            kind = sniff(p);
        } catch (const CaptureError&) {
            // Read as a capture below: the reader names the problem.
        }
        if (kind == InputKind::PartialResult || kind == InputKind::PartialDirectory)
            ++partials;
        else if (kind == InputKind::SavedReport)
            ++reports;
    }
    JobInputs in;
    if (partials == paths.size() && !paths.empty()) {
        in.kind = JobKind::Partials;
        in.paths = partialFiles(paths);
        return in;
    }
    if (reports == 1 && paths.size() == 1) {
        in.kind = JobKind::SavedReport;
        in.paths = paths;
        return in;
    }
    if (partials || reports)
        throw std::invalid_argument("give captures, partial results or one saved report, not a mix of them");
    in.paths = paths;
    return in;
}

bool streamed(const JobInputs& inputs) {
    return inputs.kind == JobKind::Partials || inputs.kind == JobKind::FileParts ||
           (inputs.kind == JobKind::Captures && captureFiles(inputs.paths).size() > 1);
}

Analysis analyzeJob(const JobInputs& inputs, const JobRequest& request, const JobProgress& progress,
                    std::vector<std::string>* madeFrom) {
    if (madeFrom) *madeFrom = inputs.paths;
    if (inputs.kind == JobKind::SavedReport) {
        report::ReportFile file = report::readReportJson(inputs.paths.at(0));
        if (madeFrom) *madeFrom = std::move(file.inputs);
        return std::move(file.analysis);
    }
    if (inputs.kind == JobKind::Partials && madeFrom) *madeFrom = partialInputs(inputs.paths);
    if (!streamed(inputs)) return analyzeInMemory(inputs, request, progress);
    partial::PartSet set;
    std::unique_ptr<AnalyzedFiles> files;
    partsOf(inputs, request, progress, set, files, true);
    Analysis a = partial::mergedAnalysis(set, mergeOptions(request, progress), request.collectives);
    if (progress.status) progress.status("");
    warn(progress, a.warnings);
    return a;
}

void writeJobJson(const JobInputs& inputs, const JobRequest& request, const report::ReportOptions& options,
                  std::ostream& out, const JobProgress& progress) {
    report::ReportOptions o = options;
    if (!streamed(inputs)) {
        const Analysis analysis = analyzeForReport(inputs, request, progress, o);
        // One file of many devices (an Nsight Systems export of a job): the
        // devices are rendered on the job's threads, as a merge's are.
        const int threads =
            request.jobs > 0 ? request.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        report::writeJsonReportOnThreads(out, analysis, o, threads);
        return;
    }
    partial::PartSet set;
    std::unique_ptr<AnalyzedFiles> files;
    partsOf(inputs, request, progress, set, files, false, &o);
    partial::writeMergedJson(set, mergeOptions(request, progress), o, out,
                             [&](const std::vector<std::string>& warnings) { warn(progress, warnings); });
    if (progress.status) progress.status("");
}

std::string jobReport(const JobInputs& inputs, const JobRequest& request, const report::ReportOptions& options,
                      bool markdown, const JobProgress& progress) {
    report::ReportOptions o = options;
    if (!streamed(inputs)) {
        const Analysis analysis = analyzeForReport(inputs, request, progress, o);
        return markdown ? report::formatMarkdownReport(analysis, o) : report::formatTextReport(analysis, o);
    }
    // Device by device: the job's devices are never in memory together.
    partial::PartSet set;
    std::unique_ptr<AnalyzedFiles> files;
    partsOf(inputs, request, progress, set, files, false, &o);
    std::vector<std::string> warnings;
    std::string text =
        partial::mergedReport(set, mergeOptions(request, progress), o,
                              markdown ? report::ReportFormat::Markdown : report::ReportFormat::Text, &warnings);
    if (progress.status) progress.status("");
    warn(progress, warnings);
    return text;
}

std::unique_ptr<AnalyzedFiles> analyzeFiles(const std::vector<std::string>& captures, const JobRequest& request,
                                            const JobProgress& progress) {
    auto files = std::make_unique<AnalyzedFiles>(captures, request.settings, workerOptions(request, progress));
    if (progress.status) progress.status("");
    return files;
}

}  // namespace osc::job

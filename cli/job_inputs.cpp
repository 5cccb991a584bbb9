#include "cli/job_inputs.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/printable_text.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/partial/merge.h"
#include "analyzer/partial/partial_format.h"
#include "analyzer/pipeline/analyze_inputs.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "cli/cli_common.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace osc::cli {
namespace {

namespace fs = std::filesystem;

// A report JSON says so in its first bytes: {"format": "overlapscope-report", ...
bool isReportJson(const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return false;
    std::ifstream in(path, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    size_t i = head.find_first_not_of(" \t\r\n");
    if (i == std::string::npos || head[i] != '{') return false;
    const auto key = head.find("\"format\"", i);
    if (key == std::string::npos) return false;
    i = head.find_first_not_of(" \t\r\n", key + 8);
    if (i == std::string::npos || head[i] != ':') return false;
    i = head.find_first_not_of(" \t\r\n", i + 1);
    return i != std::string::npos && head.compare(i, 21, "\"overlapscope-report\"") == 0;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Partial files in a directory, by name; empty when it holds none.
std::vector<std::string> partialsIn(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file() && endsWith(e.path().filename().string(), partial::kPartialSuffix))
            out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

bool isDirectory(const std::string& path) {
    std::error_code ec;
    return fs::is_directory(path, ec);
}

// A directory of captures holds capture files; one holding only partials is partials.
bool isPartialDirectory(const std::string& path) {
    if (!isDirectory(path) || partialsIn(path).empty()) return false;
    try {
        return captureFiles({path}).empty();
    } catch (const CaptureError&) {
        return true;  // "holds no capture files"
    }
}

// "analyzing: 12/1024 files, 8.3/s, about 2 min left" over the pipeline.
PipelineOptions pipelineOptions(int jobs, RateProgress& progress) {
    PipelineOptions o;
    o.jobs = jobs;
    o.progress = [&progress](size_t done, size_t total, const std::string&) { progress.update(done, total); };
    return o;
}

partial::MergeOptions mergeOptions(std::optional<bool> align, RateProgress& progress) {
    partial::MergeOptions o;
    o.alignCollectives = align;
    o.progress = [&progress](size_t done, size_t total) { progress.update(done, total); };
    return o;
}

void readPartials(const std::vector<std::string>& files, partial::PartSet& set) {
    ProgressLine line;
    for (size_t i = 0; i < files.size(); ++i) {
        line.show("reading partial results", static_cast<double>(i) / static_cast<double>(files.size()));
        set.addPartialFile(files[i]);
    }
}

}  // namespace

std::vector<std::string> partialFiles(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& p : paths) {
        if (isDirectory(p)) {
            const auto found = partialsIn(p);
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
        if (!partial::looksLikePartial(f)) continue;  // the merge names the problem
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

JobInputs classifyInputs(const std::vector<std::string>& paths) {
    size_t partials = 0, reports = 0;
    for (const auto& p : paths) {
        if (isDirectory(p) ? isPartialDirectory(p) : partial::looksLikePartial(p)) ++partials;
        else if (isReportJson(p)) ++reports;
    }
    JobInputs in;
    if (partials == paths.size() && !paths.empty()) {
        in.kind = InputKind::Partials;
        in.paths = partialFiles(paths);
        return in;
    }
    if (reports == 1 && paths.size() == 1) {
        in.kind = InputKind::ReportJson;
        in.paths = paths;
        return in;
    }
    if (partials || reports)
        throw std::invalid_argument("give captures, partial results or one saved report, not a mix of them");
    in.paths = paths;
    return in;
}

void JobsFlag::addTo(CLI::App* cmd) {
    cmd->add_option("-j,--jobs", jobs,
                    "Analyse several capture files on N threads (default: every core; 1 = one at a time)")
        ->type_name("N")
        ->check(CLI::Range(0, 4096));
}

void ReportLayoutFlags::addTo(CLI::App* cmd) {
    cmd->add_option("--format", format, "text (default), json (DESIGN.md section 5) or markdown")
        ->check(CLI::IsMember({"text", "json", "markdown"}));
    cmd->add_flag("--steps", steps, "Add a per-step table (text, markdown; JSON always has steps)");
    cmd->add_flag("--collectives", collectives,
                  "Add the most exposed collectives (and, for several ranks, the largest skews)");
    cmd->add_flag("--interference", interference,
                  "Add a per kernel signature table: compute kernels that ran under communication "
                  "against the same kernel (name, grid, block) alone (text, markdown; JSON always has it)");
    cmd->add_option("--top", top, "Rows in each --collectives table (default 20, 0 = all)");
}

bool ReportLayoutFlags::given(const CLI::App& cmd) const {
    return cmd.count("--format") || steps || collectives || interference || cmd.count("--top");
}

void ReportLayoutFlags::fill(report::ReportOptions& options) const {
    options.steps = steps;
    options.collectives = collectives;
    options.interference = interference;
    options.topCollectives = top;
}

bool streamsJson(const JobInputs& inputs) {
    return inputs.kind == InputKind::Partials ||
           (inputs.kind == InputKind::Captures && captureFiles(inputs.paths).size() > 1);
}

namespace {

// Several captures or partials as one PartSet: captures are analysed file by
// file first (progress over files). `files` keeps the captures' scratch
// files alive for as long as `set` is used.
void partsOf(const JobInputs& inputs, const JobRequest& request, partial::PartSet& set,
             std::unique_ptr<AnalyzedFiles>& files) {
    if (inputs.kind == InputKind::Partials) {
        readPartials(inputs.paths, set);
    } else {
        RateProgress progress("analyzing", "files");
        files = std::make_unique<AnalyzedFiles>(inputs.paths, request.settings,
                                                pipelineOptions(request.jobs, progress));
        progress.done();
        files->addTo(set, inputs.paths);
    }
    printWarnings(set.loadWarnings());
}

}  // namespace

Analysis analyzeJob(const JobInputs& inputs, const JobRequest& request) {
    if (inputs.kind == InputKind::ReportJson) return report::readReportJson(inputs.paths[0]).analysis;
    if (!streamsJson(inputs)) return analyzeWithStatus(loadInputs(inputs.paths), request.settings);
    partial::PartSet set;
    std::unique_ptr<AnalyzedFiles> files;
    partsOf(inputs, request, set, files);
    RateProgress merging("merging", "devices");
    Analysis a = partial::mergedAnalysis(set, mergeOptions(request.align, merging), request.collectives);
    merging.done();
    printWarnings(a.warnings);
    return a;
}

void writeJobJson(const JobInputs& inputs, const JobRequest& request, const report::ReportOptions& options,
                  std::ostream& out) {
    if (!streamsJson(inputs)) {
        report::writeJsonReport(out, analyzeJob(inputs, request), options);
        return;
    }
    partial::PartSet set;
    std::unique_ptr<AnalyzedFiles> files;
    partsOf(inputs, request, set, files);
    RateProgress merging("merging", "devices");
    partial::Merge merge(set, mergeOptions(request.align, merging));
    printWarnings(merge.rest().warnings);
    report::StreamedReportBody body;
    body.deviceCount = merge.deviceCount();
    body.writeDevice = [&](std::ostream& os, int indent, size_t i) { merge.writeDevice(os, indent, i); };
    body.matchedCount = merge.matchedCount();
    body.matched = [&](size_t i) { return merge.matched(i); };
    report::writeJsonReport(out, merge.rest(), options, body);
    merging.done();
}

void writeJobReport(const JobInputs& inputs, const JobRequest& request, const report::ReportOptions& options,
                    const std::string& format, const std::string& output, bool force) {
    if (format == "json") {
        // Streamed: a JSON report lists every collective, millions on big captures.
        writeOutput(output, [&](std::ostream& out) { writeJobJson(inputs, request, options, out); }, force);
        return;
    }
    const Analysis analysis = analyzeJob(inputs, request);
    const std::string text = format == "markdown" ? report::formatMarkdownReport(analysis, options)
                                                  : report::formatTextReport(analysis, options);
    writeOutput(output, printable(text, /*keepLineBreaks=*/true), force);
}

}  // namespace osc::cli

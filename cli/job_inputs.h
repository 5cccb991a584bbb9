// What the analysis commands were given and how each kind becomes a report:
// one capture file is loaded whole; several are analysed file by file on
// --jobs threads and merged (analyzer/pipeline); partial results are merged
// (analyzer/partial); a saved report JSON is read back (check, diff). Each
// path shows progress on a terminal and prints warnings on stderr.
#pragma once

#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_options.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace osc::cli {

enum class InputKind { Captures, Partials, ReportJson };

struct JobInputs {
    InputKind kind = InputKind::Captures;
    std::vector<std::string> paths;  // Partials: the partial files, directories expanded
};

// By content: partial results (files, or directories holding only
// *.partial.json), one saved report JSON, or captures (anything else,
// checked when loaded). Throws std::invalid_argument for a mix.
JobInputs classifyInputs(const std::vector<std::string>& paths);
// Files and directories of partial results; throws CaptureError for a
// directory without any.
std::vector<std::string> partialFiles(const std::vector<std::string>& paths);

// What the partial files were made from (their "inputs", in order): the
// inputs a merged report names.
std::vector<std::string> partialInputs(const std::vector<std::string>& partialFiles);

// --jobs N: worker threads for several capture files.
struct JobsFlag {
    int jobs = 0;
    void addTo(CLI::App* cmd);
};

// What a report shows and in which form: the options `report` and `merge`
// share (--format, --steps, --collectives, --interference, --top).
struct ReportLayoutFlags {
    std::string format = "text";
    bool steps = false, collectives = false, interference = false;
    size_t top = 20;
    void addTo(CLI::App* cmd);
    // Whether any of them was given (report --partial refuses them).
    bool given(const CLI::App& cmd) const;
    void fill(report::ReportOptions& options) const;
};

struct JobRequest {
    AnalysisSettings settings;
    int jobs = 0;
    std::optional<bool> align;  // partials: --align given to merge
    bool collectives = true;    // false: totals and steps only (check, diff)
};

// The job's analysis, whatever the inputs are.
Analysis analyzeJob(const JobInputs& inputs, const JobRequest& request);
// The report JSON, streamed; for several captures or partials the devices
// never sit in memory together.
void writeJobJson(const JobInputs& inputs, const JobRequest& request, const report::ReportOptions& options,
                  std::ostream& out);
// The report as `format` says (text, markdown or json) into `output` (stdout
// when empty; an existing file only with `force`). JSON streams as
// writeJobJson; text and Markdown pass through printable(), since names come
// from the files and no control bytes or broken UTF-8 may reach a terminal.
void writeJobReport(const JobInputs& inputs, const JobRequest& request, const report::ReportOptions& options,
                    const std::string& format, const std::string& output, bool force);
// True when writeJobJson streams (several files or partials) rather than
// building an Analysis first.
bool streamsJson(const JobInputs& inputs);

}  // namespace osc::cli

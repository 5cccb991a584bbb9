// `overlapscope diff BASE CANDIDATE`: compare two captures or saved reports.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/printable_text.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/report_json.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/job_inputs.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

namespace osc::cli {
namespace {

struct DiffArgs {
    std::string base, candidate;
    std::string format = "text";
    std::optional<double> failPercent;
    std::string output;
    bool force = false;
    AnalysisFlags flags;
    JobsFlag jobs;
};

// A capture, a directory of them, partial results or a saved report.
Analysis analysisOf(const std::string& path, const AnalysisFlags& flags, int jobs) {
    job::JobRequest request;
    request.settings = flags.settings();
    request.jobs = jobs;
    request.collectives = false;  // diff compares totals and steps
    return analyzeJobWithProgress(job::classifyJob({path}), request);
}

int runDiff(const DiffArgs& args) {
    if (args.failPercent && !(*args.failPercent >= 0))
        throw std::invalid_argument("--fail-on-regression must be a percentage >= 0");
    const Analysis base = analysisOf(args.base, args.flags, args.jobs.jobs);
    const Analysis candidate = analysisOf(args.candidate, args.flags, args.jobs.jobs);
    report::DiffResult diff = report::diffAnalyses(base, candidate);
    diff.basePath = args.base;
    diff.candidatePath = args.candidate;
    std::string text;
    if (args.format == "json")
        text = report::formatDiffJson(diff, args.failPercent);
    else if (args.format == "markdown")
        text = report::formatDiffMarkdown(diff, args.failPercent);
    else
        text = report::formatDiffText(diff, args.failPercent);
    // Names come from the files: no control bytes or broken UTF-8 reach a
    // terminal (JSON is valid UTF-8 with its controls escaped already).
    writeOutput(args.output, args.format == "json" ? text : printable(text, /*keepLineBreaks=*/true), args.force);
    return args.failPercent && report::exceedsRegression(diff, *args.failPercent) ? 1 : 0;
}

// "5", "5%" or "5.5 %" -> 5.5
double parsePercent(std::string text) {
    while (!text.empty() && (text.back() == '%' || text.back() == ' ')) text.pop_back();
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !(v >= 0))
        throw CLI::ValidationError("--fail-on-regression", "expected a percentage such as 5 or 5%");
    return v;
}

}  // namespace

void addDiffCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<DiffArgs>();
    auto* cmd = app.add_subcommand(
        "diff",
        "Compare two runs: metrics side by side with absolute and relative change, for the "
        "summary, each device (matched by rank and GPU) and each step (matched by position), "
        "largest regressions first.\nBASE and CANDIDATE are captures (any supported format, or a "
        "directory of per-rank files), partial results (a file, or a directory of *.partial.json) or "
        "JSON reports from `overlapscope report --format json` or `merge --format json`.\n"
        "A regression is overlap ratio falling, or exposed communication growing, in percent of "
        "the base value.\nExit codes: 0 no regression beyond the limit, 1 regression beyond "
        "--fail-on-regression, 2 bad input.");
    cmd->add_option("BASE", args->base, "The reference run (capture or report JSON)")->required();
    cmd->add_option("CANDIDATE", args->candidate, "The run to judge (capture or report JSON)")->required();
    cmd->add_option("--format", args->format, "text (default), json or markdown")
        ->check(CLI::IsMember({"text", "json", "markdown"}));
    cmd->add_option_function<std::string>(
           "--fail-on-regression", [args](const std::string& v) { args->failPercent = parsePercent(v); },
           "Exit 1 when overlap ratio or exposed communication (summary or any device) worsens "
           "by more than P percent")
        ->type_name("P%");
    cmd->add_option("-o,--output", args->output,
                    "Write to FILE instead of stdout; an existing FILE is replaced only with --force")
        ->type_name("FILE")
        ->check(nonEmptyFileName());
    cmd->add_flag("--force", args->force, "Replace an existing --output file");
    args->flags.addTo(cmd);
    args->jobs.addTo(cmd);
    cmd->callback([&selected, args] { selected = [args] { return runDiff(*args); }; });
}

}  // namespace osc::cli

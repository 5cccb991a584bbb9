// `overlapscope diff BASE CANDIDATE`: compare two captures or saved reports.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/printable_text.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/report_json.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/help_format.h"
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
    bool failOnStepRegression = false;
    NoiseFlags noise;
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
    request.collectives = true;  // the per-step comparison sums each collective's time per step
    return analyzeJobWithProgress(job::classifyJob({path}), request);
}

int runDiff(const DiffArgs& args) {
    if (args.failPercent && !(*args.failPercent >= 0))
        throw std::invalid_argument("--fail-on-regression must be a percentage >= 0");
    const report::NoiseOptions noise = args.noise.options();  // checked before the (possibly long) loads
    const Analysis base = analysisOf(args.base, args.flags, args.jobs.jobs);
    const Analysis candidate = analysisOf(args.candidate, args.flags, args.jobs.jobs);
    report::DiffResult diff = report::diffAnalyses(base, candidate, noise);
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
    const bool whole = args.failPercent && report::exceedsRegression(diff, *args.failPercent);
    const bool steps = args.failOnStepRegression && report::stepRegressed(diff.steps, /*tooFewFails=*/true);
    return whole || steps ? 1 : 0;
}

}  // namespace

void addDiffCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<DiffArgs>();
    auto* cmd = app.add_subcommand("diff");
    describe(cmd, "Compare two runs side by side, largest regressions first",
             "overlapscope diff baseline.json runs/ --fail-on-regression 5%",
             "Metrics with absolute and relative change, for the summary, each device (matched by rank and GPU) and "
             "each step (matched by position).\nBASE and CANDIDATE are captures (any supported format, or a "
             "directory of per-rank files), partial results (a file, or a directory of *.partial.json) or "
             "JSON reports from `overlapscope report --format json` or `merge --format json`.\n"
             "A regression is overlap ratio falling, or exposed communication growing, in percent of "
             "the base value. Per device, step time, exposed communication and each collective's time per step "
             "are also compared as distributions, against the noise the steps show (docs/metrics.md section 10)."
             "\nExit codes: 0 no regression beyond the limit, 1 regression beyond "
             "--fail-on-regression (or, with --fail-on-step-regression, beyond the noise), 2 bad input.");
    cmd->add_option("BASE", args->base, "The reference run (capture or report JSON)")->required();
    cmd->add_option("CANDIDATE", args->candidate, "The run to judge (capture or report JSON)")->required();
    cmd->add_option("--format", args->format, "text (default), json or markdown")
        ->check(CLI::IsMember({"text", "json", "markdown"}));
    cmd->add_option_function<std::string>(
           "--fail-on-regression",
           [args](const std::string& v) { args->failPercent = parsePercent(v, "--fail-on-regression"); },
           "Exit 1 when the whole run's overlap ratio or exposed communication (summary or any device) worsens "
           "by more than P percent (single figures)")
        ->type_name("P%");
    cmd->add_flag("--fail-on-step-regression", args->failOnStepRegression,
                  "Exit 1 when the per-step comparison finds a regression beyond the noise, or a device has too "
                  "few steps to judge");
    args->noise.addTo(cmd);
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

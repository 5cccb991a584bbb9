// `overlapscope report CAPTURE...`: the overlap report as text, JSON or
// Markdown; with --partial, the per-file half of it for `merge`.
#include "analyzer/output/safe_output.h"
#include "analyzer/report/report_json.h"
#include "cli/cli_common.h"
#include "cli/cluster_parts.h"
#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/job_inputs.h"

#include <memory>
#include <optional>
#include <stdexcept>

namespace osc::cli {
namespace {

struct ReportArgs {
    std::vector<std::string> inputs;
    ReportLayoutFlags layout;
    std::string output;
    bool force = false;
    bool partial = false;
    AnalysisFlags flags;
    JobsFlag jobs;
    SchedulerFlag scheduler;
};

// The per-file half for `overlapscope merge`: every file analysed alone on
// --jobs threads, written as one partial result.
int runPartial(const ReportArgs& args, const CLI::App& cmd) {
    if (args.layout.given(cmd))
        throw std::invalid_argument(
            "report --partial: --format, --steps, --collectives, --interference and "
            "--top belong to `overlapscope merge`, which writes the report");
    if (!args.output.empty() && args.output != "-") output::checkOutputPath(args.output, args.force);
    job::JobRequest request;
    request.settings = args.flags.settings();
    request.jobs = args.jobs.jobs;
    const auto files = [&] {
        const JobProgressLines lines;
        return job::analyzeFiles(args.inputs, request, lines.progress());
    }();
    writeOutput(
        args.output,
        [&](std::ostream& out) { files->writePartial(out, args.inputs, std::string("overlapscope ") + OSC_VERSION); },
        args.force);
    return 0;
}

int runReport(const ReportArgs& args, const CLI::App& cmd) {
    if (args.partial) {
        if (args.scheduler.given())
            throw std::invalid_argument("report --partial: --scheduler makes the parts and merges them itself");
        return runPartial(args, cmd);
    }
    // On a cluster: the files' parts made by its workers, merged here as one
    // process merges the parts of its own threads.
    std::optional<ClusterParts> cluster;
    if (args.scheduler.given()) {
        // Before the cluster's work, as one process checks before it reads.
        if (!args.output.empty() && args.output != "-") output::checkOutputPath(args.output, args.force);
        cluster.emplace(args.scheduler, args.inputs, args.flags);
    }
    const job::JobInputs inputs = cluster ? cluster->inputs() : job::classifyJob(args.inputs);
    if (!cluster && inputs.kind != job::JobKind::Captures)
        throw std::invalid_argument(args.inputs.front() + ": " +
                                    (inputs.kind == job::JobKind::Partials
                                         ? "partial results are merged with `overlapscope merge`"
                                         : "a saved report; `check` and `diff` read those"));
    if (!args.output.empty() && args.output != "-") output::checkOutputPath(args.output, args.force);
    job::JobRequest request;
    request.settings = args.flags.settings();
    request.jobs = args.jobs.jobs;
    report::ReportOptions options;
    options.inputs = args.inputs;
    options.toolVersion = OSC_VERSION;
    args.layout.fill(options);
    writeJobReport(inputs, request, options, args.layout.format, args.output, args.force);
    return 0;
}

}  // namespace

void addReportCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<ReportArgs>();
    auto* cmd = app.add_subcommand("report");
    describe(cmd, "Print how much communication is hidden behind compute, per device",
             "overlapscope report runs/ --format json",
             "With the bottleneck collective and findings.\nInputs: overlapscope captures, Nsight Systems SQLite "
             "exports, PyTorch profiler traces (.json, .json.gz), or a directory of them (one per rank). Several "
             "files are analysed one at a time per thread (--jobs), so memory follows the largest file, not the "
             "job.\nWith --partial: write the per-file half of the analysis for `overlapscope merge` (one partial "
             "result per node of a cluster job).\nExit codes: 0 report written, 2 bad input (also nothing to report: "
             "every capture did not finish and saved nothing).");
    cmd->add_option("CAPTURE", args->inputs, "Capture file(s) or directory of per-rank captures")->required();
    args->layout.addTo(cmd);
    cmd->add_option("-o,--output", args->output,
                    "Write to FILE instead of stdout; an existing FILE is replaced only with --force")
        ->type_name("FILE")
        ->check(nonEmptyFileName());
    cmd->add_flag("--force", args->force, "Replace an existing --output file");
    cmd->add_flag("--partial", args->partial,
                  "Write a partial result (JSON Lines; name it NAME.partial.json) instead of the report: "
                  "the analysis of these files alone, which `overlapscope merge` combines with the "
                  "partials of other nodes into the job's report (--align is applied there).");
    args->flags.addTo(cmd);
    args->jobs.addTo(cmd);
    args->scheduler.addTo(cmd);
    cmd->callback([&selected, args, cmd] { selected = [args, cmd] { return runReport(*args, *cmd); }; });
}

}  // namespace osc::cli

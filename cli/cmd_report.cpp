// `overlapscope report CAPTURE...`: the overlap report as text, JSON or Markdown.
#include "analyzer/capture/printable_text.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"

#include <memory>

namespace osc::cli {
namespace {

struct ReportArgs {
    std::vector<std::string> inputs;
    std::string format = "text";
    bool steps = false, collectives = false, interference = false;
    size_t top = 20;
    std::string output;
    bool force = false;
    AnalysisFlags flags;
};

int runReport(const ReportArgs& args) {
    const Capture capture = loadInputs(args.inputs);
    const Analysis analysis = analyzeWithStatus(capture, args.flags.settings());
    report::ReportOptions options;
    options.inputs = args.inputs;
    options.toolVersion = OSC_VERSION;
    options.steps = args.steps;
    options.collectives = args.collectives;
    options.interference = args.interference;
    options.topCollectives = args.top;
    if (args.format == "json") {
        // Streamed: a JSON report lists every collective, millions on big captures.
        writeOutput(
            args.output, [&](std::ostream& out) { report::writeJsonReport(out, analysis, options); },
            args.force);
        return 0;
    }
    const std::string text = args.format == "markdown" ? report::formatMarkdownReport(analysis, options)
                                                       : report::formatTextReport(analysis, options);
    // Names come from the file: no control bytes or broken UTF-8 reach a terminal.
    writeOutput(args.output, printable(text, /*keepLineBreaks=*/true), args.force);
    return 0;
}

}  // namespace

void addReportCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<ReportArgs>();
    auto* cmd = app.add_subcommand(
        "report",
        "Print how much communication is hidden behind compute, per device, with the bottleneck "
        "collective and findings.\nInputs: overlapscope captures, Nsight Systems SQLite exports, "
        "PyTorch profiler traces (.json, .json.gz), or a directory of them (one per rank).\n"
        "Exit codes: 0 report written, 2 bad input.");
    cmd->add_option("CAPTURE", args->inputs, "Capture file(s) or directory of per-rank captures")
        ->required();
    cmd->add_option("--format", args->format, "text (default), json (DESIGN.md section 5) or markdown")
        ->check(CLI::IsMember({"text", "json", "markdown"}));
    cmd->add_flag("--steps", args->steps, "Add a per-step table (text, markdown; JSON always has steps)");
    cmd->add_flag("--collectives", args->collectives,
                  "Add the most exposed collectives (and, for several ranks, the largest skews)");
    cmd->add_flag("--interference", args->interference,
                  "Add a per kernel signature table: compute kernels that ran under communication "
                  "against the same kernel (name, grid, block) alone (text, markdown; JSON always has it)");
    cmd->add_option("--top", args->top, "Rows in each --collectives table (default 20, 0 = all)");
    cmd->add_option("-o,--output", args->output,
                    "Write to FILE instead of stdout; an existing FILE is replaced only with --force")
        ->type_name("FILE");
    cmd->add_flag("--force", args->force, "Replace an existing --output file");
    args->flags.addTo(cmd);
    cmd->callback([&selected, args] { selected = [args] { return runReport(*args); }; });
}

}  // namespace osc::cli

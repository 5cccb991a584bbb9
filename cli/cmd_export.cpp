// `overlapscope export CAPTURE... -o trace.json`: a Chrome/Perfetto trace.
#include "analyzer/capture/capture_error.h"
#include "analyzer/crossrank/clock_alignment.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/output/safe_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/help_format.h"

#include <iostream>
#include <memory>

namespace osc::cli {
namespace {

struct ExportArgs {
    std::vector<std::string> inputs;
    std::string output;
    std::string format = "chrome";
    bool force = false, noOverlap = false, noFlows = false;
    AnalysisFlags flags;
};

int runExport(const ExportArgs& args) {
    const bool toStdout = args.output == "-";
    // Checked before loading, so a long load is not wasted on a refusal.
    if (!toStdout) output::checkOutputPath(args.output, args.force);

    Capture capture = loadInputs(args.inputs);
    ChromeExportOptions options;
    options.settings = args.flags.settings();
    if (options.settings.alignCollectives) crossrank::alignOnCollectives(capture, options.settings);
    options.overlapLanes = !args.noOverlap;
    options.flows = !args.noFlows;
    ProgressLine progress;
    options.progress = [&](double f) { progress.show("writing trace", f); };

    writeOutput(
        args.output, [&](std::ostream& out) { writeChromeTrace(capture, out, options); }, args.force);
    progress.done();
    return 0;
}

}  // namespace

void addExportCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<ExportArgs>();
    auto* cmd = app.add_subcommand("export");
    describe(cmd, "Write a capture as a Chrome trace for Perfetto or chrome://tracing",
             "overlapscope export runs/ -o trace.json",
             "The trace (JSON) opens in Perfetto (ui.perfetto.dev) or chrome://tracing:\none process per rank, one "
             "thread per GPU stream, a lane per GPU with overlap (C∩M) and exposed communication (M∖C), and arrows "
             "from CUDA calls to the work they launched.\nThe file reads back into overlapscope like a PyTorch "
             "profiler trace.\nExit codes: 0 written, 2 bad input or the output exists.");
    cmd->add_option("CAPTURE", args->inputs, "Capture file(s) or directory of per-rank captures")->required();
    cmd->add_option("-o,--output", args->output, "Trace file to write (\"-\" for stdout)")
        ->required()
        ->type_name("FILE")
        ->check(nonEmptyFileName());
    cmd->add_option("--format", args->format, "Output format: chrome (the only one for now)")
        ->check(CLI::IsMember({"chrome"}));
    cmd->add_flag("--force", args->force, "Replace an existing output file");
    cmd->add_flag("--no-overlap-lanes", args->noOverlap, "Leave out the overlap / exposed lanes");
    cmd->add_flag("--no-flows", args->noFlows, "Leave out the CUDA call -> GPU work arrows");
    args->flags.addTo(cmd);
    cmd->callback([&selected, args] { selected = [args] { return runExport(*args); }; });
}

}  // namespace osc::cli

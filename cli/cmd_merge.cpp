// `overlapscope merge PARTIAL...`: partial results (report --partial, the
// agent's OVERLAPSCOPE_PARTIAL) combined into the job's report.
#include "analyzer/output/safe_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/job_inputs.h"

#include <memory>
#include <optional>

namespace osc::cli {
namespace {

struct MergeArgs {
    std::vector<std::string> inputs;
    ReportLayoutFlags layout;
    std::string output;
    bool force = false;
    std::string align;
    double peakBusBwGbps = 0;
};

int runMerge(const MergeArgs& args) {
    job::JobInputs inputs;
    inputs.kind = job::JobKind::Partials;
    inputs.paths = job::partialFiles(args.inputs);
    if (!args.output.empty() && args.output != "-") output::checkOutputPath(args.output, args.force);
    job::JobRequest request;
    if (!args.align.empty()) request.align = args.align == "collectives";
    if (args.peakBusBwGbps > 0) request.settings.peakBusBwGbps = args.peakBusBwGbps;
    report::ReportOptions options;
    options.toolVersion = OSC_VERSION;
    args.layout.fill(options);
    // The report names what was analysed: the inputs each partial was made from.
    options.inputs = job::partialInputs(inputs.paths);
    writeJobReport(inputs, request, options, args.layout.format, args.output, args.force);
    return 0;
}

}  // namespace

void addMergeCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<MergeArgs>();
    auto* cmd = app.add_subcommand("merge");
    describe(cmd, "Combine partial results (`report --partial`) into the job's report",
             "overlapscope merge partials/ --format json",
             "Partial results come from `report --partial` or the agent's OVERLAPSCOPE_PARTIAL. The report is the "
             "same `overlapscope report` gives on all the captures at once, without the captures. Memory follows "
             "the largest device, not the job.\nExit codes: 0 report written, 2 bad input (a missing, cut-off or "
             "foreign partial; partials made with different --comm-kernel/--comm-copies/--step-pattern/"
             "--microbatch-pattern/--pipeline-stages; or every capture they were made from saved nothing).");
    cmd->add_option("PARTIAL", args->inputs, "Partial result files, or directories of *.partial.json")->required();
    args->layout.addTo(cmd);
    cmd->add_option("-o,--output", args->output,
                    "Write to FILE instead of stdout; an existing FILE is replaced only with --force")
        ->type_name("FILE")
        ->check(nonEmptyFileName());
    cmd->add_flag("--force", args->force, "Replace an existing --output file");
    cmd->add_option("--align", args->align,
                    "'session-start' or 'collectives' (see report --align); default: what the partials "
                    "were made with")
        ->check(CLI::IsMember({"session-start", "collectives"}))
        ->type_name("MODE");
    addPeakBusBwOption(cmd, args->peakBusBwGbps);
    cmd->callback([&selected, args] { selected = [args] { return runMerge(*args); }; });
}

}  // namespace osc::cli

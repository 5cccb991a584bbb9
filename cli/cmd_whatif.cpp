// `overlapscope whatif CAPTURE --bucket-mb 1,5,10,25,50,100`: step time and
// exposed communication predicted for other DDP bucket sizes from one
// capture (analyzer/whatif/, docs/metrics.md "What-if").
#include "analyzer/capture/printable_text.h"
#include "analyzer/whatif/whatif.h"
#include "analyzer/whatif/whatif_report.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/help_format.h"

#include <memory>
#include <stdexcept>

namespace osc::cli {
namespace {

struct WhatIfArgs {
    std::vector<std::string> inputs;
    std::string format = "text";
    bool summary = false;
    std::string rule = "at-least";
    std::string readiness = "kernels";
    bool baseModel = false;
    bool noLatencies = false;
    bool independentRanks = false;
    whatif::WhatIfSettings settings;
    std::optional<double> observedMb, alphaNs, gradMb;
    std::string output;
    bool force = false;
    AnalysisFlags flags;
};

int runWhatIf(WhatIfArgs& args) {
    whatif::WhatIfSettings& s = args.settings;
    s.rule = args.rule == "at-most" ? whatif::BucketRule::AtMost : whatif::BucketRule::AtLeast;
    s.readiness = args.readiness == "time" ? whatif::ReadinessMode::Time : whatif::ReadinessMode::Kernels;
    s.observedMb = args.observedMb;
    s.alphaNs = args.alphaNs;
    s.gradMb = args.gradMb;
    s.jointRanks = !args.independentRanks;
    s.latencies = !args.noLatencies;
    if (args.baseModel) {
        s.readiness = whatif::ReadinessMode::Time;
        s.latencies = false;
        s.jointRanks = false;
    }
    s.validate();  // before loading: a bad option should not wait for a big capture
    const Capture capture = loadInputs(args.inputs, /*launchDetails=*/false);
    const Analysis analysis = analyzeWithStatus(capture, args.flags.settings());
    ProgressLine progress;
    progress.status("replaying " + std::to_string(s.bucketMb.size()) + " bucket sizes");
    whatif::WhatIfResult result = whatif::runWhatIf(capture, analysis, s);
    progress.done();
    // A capture the model does not fit would get a confident "best" size
    // that means nothing: refused, one line, unless the user insists.
    if (const auto misfit = whatif::modelMisfit(result)) {
        if (!args.force)
            throw std::invalid_argument("whatif: " + args.inputs.front() + ": " + *misfit +
                                        " (--force models it anyway)");
        result.warnings.push_back("modelled with --force although " + *misfit);
    }
    printWarnings(result.warnings);
    whatif::ReportOptions options;
    options.inputs = args.inputs;
    options.summary = args.summary;
    const std::string text = args.format == "json" ? whatif::formatWhatIfJson(result, options)
                                                   : printable(whatif::formatWhatIfText(result, options), true);
    writeOutput(args.output, text, args.force);
    return 0;
}

}  // namespace

void addWhatIfCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<WhatIfArgs>();
    auto* cmd = app.add_subcommand("whatif");
    describe(cmd, "Predict step time for other DDP bucket sizes from one capture",
             "overlapscope whatif runs/ --bucket-mb 10,25,50",
             "Step time and exposed communication, for each bucket size.\n"
             "Fits each gradient collective's cost (alpha + ns per byte) on the capture, finds when each "
             "bucket's gradients were ready (host launch order), closes new buckets on those points the "
             "way DDP does and replays the step. Replaying the observed buckets is the self-check.\n"
             "Needs steps (NVTX 'step N', ProfilerStep#N, ...), all-reduce or reduce-scatter sizes (NCCL "
             "profiler plugin rows or Kineto collective arguments; --comm-copies for copy-based runs) and "
             "host launch records. See docs/metrics.md \"What-if\".\n"
             "Refuses (exit 2, one line saying why) a capture the model does not fit: its collectives run "
             "inside the forward pass (tensor parallelism, not gradient buckets of a backward pass), or "
             "replaying its observed buckets misses the measured step by more than 10%. --force models it anyway.\n"
             "Exit codes: 0 written, 2 bad input or a capture the model does not fit.");
    cmd->add_option("CAPTURE", args->inputs, "Capture file(s) or directory of per-rank captures")->required();
    cmd->add_option("--bucket-mb", args->settings.bucketMb,
                    "Bucket sizes to predict, MiB, comma-separated (default 1,5,10,25,50,100)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->type_name("MB,...");
    cmd->add_option("--format", args->format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
    cmd->add_flag("--summary", args->summary, "One table: the median over ranks, instead of one per device");
    cmd->add_option("--bucket-rule", args->rule,
                    "How a bucket closes: at-least (PyTorch DDP: once it holds the size or more; default) "
                    "or at-most (never above the size, a gradient larger than it alone)")
        ->check(CLI::IsMember({"at-least", "at-most"}));
    cmd->add_option("--readiness", args->readiness,
                    "Where gradients become ready between observed buckets: kernels (at the ends of the "
                    "kernels that made observed buckets ready, in equal shares; default) or time (linear "
                    "in time over the backward pass)")
        ->check(CLI::IsMember({"kernels", "time"}));
    cmd->add_flag("--base-model", args->baseModel,
                  "The unrefined model: readiness linear in time, no fitted latencies, ranks replayed apart");
    cmd->add_flag("--no-latencies", args->noLatencies,
                  "Start each collective as soon as its gradients are ready and the previous one ends "
                  "(no fitted ready lag or queue gap)");
    cmd->add_flag("--independent-ranks", args->independentRanks,
                  "Replay each rank alone instead of starting each collective when the last rank arrives");
    cmd->add_option("--observed-mb", args->observedMb,
                    "The bucket size the job ran with, MiB (default: the largest observed bucket but the last)");
    cmd->add_option("--alpha-ns", args->alphaNs,
                    "Fix the per-collective latency instead of fitting it (needed when the capture holds "
                    "a single collective size)");
    cmd->add_option("--grad-mb", args->gradMb,
                    "Gradient MiB per step, for captures that record no collective sizes (Nsight Systems "
                    "exports of NCCL jobs): shared out over the step's collectives by their durations");
    cmd->add_option("--backward-pattern", args->settings.backwardPattern,
                    "Regex (case-insensitive) for ranges marking the backward pass (default 'backward')")
        ->type_name("REGEX");
    cmd->add_option("-o,--output", args->output,
                    "Write to FILE instead of stdout; an existing FILE is replaced only with --force")
        ->type_name("FILE")
        ->check(nonEmptyFileName());
    cmd->add_option("--forward-pattern", args->settings.forwardPattern,
                    "Regex (case-insensitive) for ranges marking the forward pass (default 'forward'): "
                    "collectives launched inside them are not gradient buckets")
        ->type_name("REGEX");
    cmd->add_flag("--force", args->force,
                  "Model a capture the model does not fit (see above), and replace an existing --output file");
    args->flags.addTo(cmd);
    cmd->callback([&selected, args] { selected = [args] { return runWhatIf(*args); }; });
}

}  // namespace osc::cli

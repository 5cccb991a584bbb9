// `overlapscope check CAPTURE...`: CI thresholds. Exit 0 when all hold, 1 with
// one line per violation, 2 for bad input.
#include "analyzer/capture/printable_text.h"
#include "analyzer/report/check.h"
#include "analyzer/report/report_json.h"
#include "cli/cli_common.h"
#include "cli/cluster_parts.h"
#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/job_inputs.h"

#include <cstdio>
#include <memory>
#include <optional>

namespace osc::cli {
namespace {

struct CheckArgs {
    std::vector<std::string> inputs;
    std::optional<double> minOverlapRatio, maxExposedCommMs, maxExposedCommShare;
    std::optional<double> maxComputeSlowdown, maxExposedTransferMs, maxDelayCausedMs;
    std::optional<double> maxBubbleShare, maxAllToAllImbalance;
    std::optional<double> minBusBwFraction, maxStragglerDelayMs;
    bool requireBusBw = false;
    std::string baseline;
    std::optional<double> maxRegression;  // percent
    NoiseFlags noise;
    std::string junit;
    bool allowDropped = false;
    AnalysisFlags flags;
    JobsFlag jobs;
    SchedulerFlag scheduler;
};

int runCheck(const CheckArgs& args) {
    report::Thresholds t;
    t.minOverlapRatio = args.minOverlapRatio;
    t.maxExposedCommMs = args.maxExposedCommMs;
    t.maxExposedCommShare = args.maxExposedCommShare;
    t.maxComputeSlowdown = args.maxComputeSlowdown;
    t.maxExposedTransferMs = args.maxExposedTransferMs;
    t.maxDelayCausedMs = args.maxDelayCausedMs;
    t.maxBubbleShare = args.maxBubbleShare;
    t.maxAllToAllImbalance = args.maxAllToAllImbalance;
    t.minBusBwFraction = args.minBusBwFraction;
    t.maxStragglerDelayMs = args.maxStragglerDelayMs;
    t.requireBusBw = args.requireBusBw;
    t.maxRegressionPercent = args.maxRegression;
    // --baseline alone, or with any of the noise options: the per-step
    // comparison; --max-regression alone keeps the whole-run figures only.
    if (args.noise.given() || (!args.baseline.empty() && !args.maxRegression)) t.stepRegression = args.noise.options();
    t.allowDropped = args.allowDropped;
    std::optional<report::ReportFile> baseline;
    if (!args.baseline.empty()) baseline = report::readReportJson(args.baseline);
    // Validates the thresholds before the (possibly long) load.
    report::runChecks(Analysis{}, t, baseline ? &baseline->analysis : nullptr);

    // Captures, partial results (merged here) or a report saved earlier
    // (`report --format json`, `merge --format json`).
    job::JobRequest request;
    request.settings = args.flags.settings();
    request.jobs = args.jobs.jobs;
    // Thresholds read totals, steps and the 4b/4c fields; the per-step
    // comparison also each collective's step.
    request.collectives = t.stepRegression.has_value();
    std::optional<ClusterParts> cluster;  // --scheduler: the files' parts made on a Dask cluster
    if (args.scheduler.given()) cluster.emplace(args.scheduler, args.inputs, args.flags);
    const Analysis analysis =
        analyzeJobWithProgress(cluster ? cluster->inputs() : job::classifyJob(args.inputs), request);
    const auto outcomes = report::runChecks(analysis, t, baseline ? &baseline->analysis : nullptr);

    size_t failed = 0;
    if (analysis.devices.empty()) {
        // A gate that passes on an empty capture would hide a broken capture setup.
        std::printf("FAIL no GPU activity in the capture: nothing to check\n");
        ++failed;
    }
    size_t skipped = 0;
    for (const auto& o : outcomes)
        if (!o.passed) {
            ++failed;
            std::printf("FAIL %s\n", printable(o.message).c_str());
        } else if (o.skipped) {
            // Not silent: what was asked for and could not be measured, and why.
            ++skipped;
            std::printf("SKIP %s\n", printable(o.message).c_str());
        }
    if (!args.junit.empty())
        writeOutput(args.junit, printable(report::formatJunit(outcomes, "overlapscope check"), true), true);
    if (failed == 0) {
        const std::string devices =
            std::to_string(analysis.devices.size()) + " device" + (analysis.devices.size() == 1 ? "" : "s");
        if (skipped == 0)
            std::printf("ok: %zu checks passed on %s\n", outcomes.size(), devices.c_str());
        else
            std::printf("ok: %zu checks passed and %zu skipped (SKIP above) on %s\n", outcomes.size() - skipped,
                        skipped, devices.c_str());
    }
    std::fflush(stdout);
    return failed == 0 ? 0 : 1;
}

}  // namespace

void addCheckCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<CheckArgs>();
    auto* cmd = app.add_subcommand("check");
    describe(cmd, "Fail (exit 1) when overlap misses a threshold, for CI",
             "overlapscope check runs/ --min-overlap-ratio 0.5 --junit check.xml",
             "Every threshold is checked on every device and, with several devices, on the summary (except "
             "--max-exposed-comm-ms, which is per device).\nExit codes: 0 all thresholds hold, 1 a threshold is "
             "violated (one 'FAIL' line each on stdout), 2 bad input or options.");
    cmd->add_option("CAPTURE", args->inputs,
                    "Capture file(s) or directory of per-rank captures; or partial results (report "
                    "--partial) to merge; or one report saved with --format json (report or merge)")
        ->required();
    cmd->add_option("--min-overlap-ratio", args->minOverlapRatio,
                    "Fail when less than R (0..1) of communication is hidden behind compute; a "
                    "device without communication passes")
        ->type_name("R");
    cmd->add_option("--max-exposed-comm-ms", args->maxExposedCommMs,
                    "Fail when a device has more than X ms of exposed communication")
        ->type_name("X");
    cmd->add_option("--max-exposed-comm-share", args->maxExposedCommShare,
                    "Fail when exposed communication exceeds S (0..1) of the window (the device's "
                    "span, first GPU activity to last)")
        ->type_name("S");
    cmd->add_option("--max-compute-slowdown", args->maxComputeSlowdown,
                    "Fail when compute kernels running under communication take more than R "
                    "longer than the same kernels alone (0.05 = 5%; docs/design.md 4b compute_slowdown)")
        ->type_name("R");
    cmd->add_option("--max-exposed-transfer-ms", args->maxExposedTransferMs,
                    "Fail when a device has more than X ms of exposed communication spent moving "
                    "data rather than waiting for other ranks (one device: all exposed communication)")
        ->type_name("X");
    cmd->add_option("--max-delay-caused-ms", args->maxDelayCausedMs,
                    "Fail when a device, arriving last at collectives, kept the other ranks waiting "
                    "more than X ms in all")
        ->type_name("X");
    cmd->add_option("--min-busbw-fraction", args->minBusBwFraction,
                    "Fail when a device's collectives ran at a median bus bandwidth below R (0..1) of its link's "
                    "peak (docs/design.md 4d; the peak from the GPU model or --peak-busbw-gbps); a device without "
                    "a measured fraction is skipped, saying why (a SKIP line, JUnit <skipped>)")
        ->type_name("R");
    cmd->add_flag("--require-busbw", args->requireBusBw,
                  "With --min-busbw-fraction: a device without a measured fraction fails instead of being "
                  "skipped");
    cmd->add_option("--max-straggler-delay-ms", args->maxStragglerDelayMs,
                    "Fail when a device arrived last at a collective more than X ms after the median rank of "
                    "that collective (its worst late arrival)")
        ->type_name("X");
    cmd->add_option("--max-bubble-share", args->maxBubbleShare,
                    "Fail when a pipeline stage (or, with several, all stages together) has no compute "
                    "for more than R (0..1) of the pipeline window over its steps; a device without "
                    "micro-batch ranges passes")
        ->type_name("R");
    cmd->add_option("--max-alltoall-imbalance", args->maxAllToAllImbalance,
                    "Fail when, in any step, one rank's all-to-all bytes (or, without byte counts, "
                    "transfer time) exceed R times the mean over ranks (R >= 1)")
        ->type_name("R");
    cmd->add_option("--baseline", args->baseline,
                    "A report saved earlier with 'report --format json'; devices are matched by rank and GPU. "
                    "Alone: per device, step time, exposed communication per step and each collective's time "
                    "per step fail when worse beyond the noise the steps show (docs/metrics.md section 10; "
                    "--confidence, --min-effect, --min-steps); a device with too few steps fails")
        ->type_name("REPORT.json")
        ->check(nonEmptyFileName());
    cmd->add_option_function<std::string>(
           "--max-regression",
           [args](const std::string& v) { args->maxRegression = parsePercent(v, "--max-regression"); },
           "With --baseline: fail when the whole run's overlap ratio falls more than P% below the baseline's, or "
           "its exposed communication grows more than P% above it (single figures; alone, instead of the "
           "per-step comparison)")
        ->type_name("P%");
    args->noise.addTo(cmd);
    cmd->add_option("--junit", args->junit,
                    "Also write JUnit XML (one testcase per threshold per device) to FILE; it is a "
                    "CI artifact, so an existing FILE is replaced")
        ->type_name("FILE")
        ->check(nonEmptyFileName());
    cmd->add_flag("--allow-dropped", args->allowDropped,
                  "Pass a capture whose agent dropped records (by default each such device fails "
                  "'dropped-records': its numbers undercount GPU activity)");
    args->flags.addTo(cmd);
    args->jobs.addTo(cmd);
    args->scheduler.addTo(cmd);
    cmd->callback([&selected, args] { selected = [args] { return runCheck(*args); }; });
}

}  // namespace osc::cli

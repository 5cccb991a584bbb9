// `overlapscope hang INPUT...`: which rank a stuck job waits for, from
// captures (ours, Nsight Systems exports, PyTorch traces) and PyTorch Flight
// Recorder dumps (pickles or JSON), read one dump at a time. Exit 0 healthy,
// 1 hang or desync, 2 bad input.
#include "analyzer/capture/capture_error.h"
#include "analyzer/hang/hang.h"
#include "analyzer/hang/hang_inputs.h"
#include "analyzer/hang/hang_output.h"
#include "analyzer/output/safe_output.h"
#include "cli/cli_common.h"
#include "cli/cluster_parts.h"
#include "cli/commands.h"
#include "cli/help_format.h"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace osc::cli {
namespace {

struct HangArgs {
    std::vector<std::string> inputs;
    std::string output;
    std::string format = "text";
    bool force = false;
    bool verbose = false;
    double minWaitMs = static_cast<double>(hang::kDefaultMinWaitNs) / 1e6;
    SchedulerFlag scheduler;
};

// Warnings on stderr: a few, the rest with --verbose, so that the verdict
// stays what a terminal shows.
void printSomeWarnings(const std::vector<std::string>& warnings, bool all) {
    constexpr size_t kShown = 3;
    if (all || warnings.size() <= kShown + 1) {
        printWarnings(warnings);
        return;
    }
    printWarnings(std::vector<std::string>(warnings.begin(), warnings.begin() + kShown));
    std::fprintf(stderr, "overlapscope: %zu more warnings (--verbose shows them)\n", warnings.size() - kShown);
}

// The analysis of `inputs` (the user's, or copies of them brought from a
// cluster), its inputs named as the user named them.
hang::HangAnalysis analyzeInputs(const HangArgs& args, const std::vector<std::string>& inputs) {
    const hang::HangInputs in = hang::sortHangInputs(inputs);
    std::optional<Capture> capture;
    // Every column `report` reads is read (launch details too): a capture it
    // refuses as damaged is refused here, not read in part and called healthy.
    if (!in.captures.empty()) capture = loadInputs(in.captures, true);
    // Each dump becomes its ranks' calls and is dropped.
    ProgressLine progress;
    std::optional<hang::JobSequences> dumps =
        hang::readDumpSequences(in.dumps, capture ? std::optional<int64_t>(capture->originUtcNs) : std::nullopt,
                                [&](size_t done, size_t total) {
                                    progress.show("reading Flight Recorder dumps (" + std::to_string(done) + " of " +
                                                      std::to_string(total) + ")",
                                                  static_cast<double>(done) / static_cast<double>(total));
                                });
    progress.done();

    hang::HangSettings settings;
    settings.minWaitNs = static_cast<TimeNs>(std::min(args.minWaitMs, 9e12) * 1e6);  // within int64 ns
    hang::HangAnalysis analysis =
        hang::analyzeCaptureAndDumps(capture ? &*capture : nullptr, std::move(dumps), settings);
    analysis.inputs = args.inputs;
    return analysis;
}

int runHang(const HangArgs& args) {
    const bool toStdout = args.output.empty() || args.output == "-";
    if (!toStdout) output::checkOutputPath(args.output, args.force);
    if (!(args.minWaitMs >= 0)) throw std::invalid_argument("--min-wait-ms must be 0 or more");

    // On a cluster: the files read by its workers, analysed here as one
    // process analyses them, every name in the answer the user's again.
    std::optional<ClusterFiles> cluster;
    if (args.scheduler.given()) cluster.emplace(args.scheduler, args.inputs);
    const auto named = [&](std::string text) { return cluster ? cluster->named(std::move(text)) : text; };
    hang::HangAnalysis analysis;
    try {
        analysis = analyzeInputs(args, cluster ? cluster->inputs() : args.inputs);
    } catch (const CaptureError& e) {
        if (!cluster) throw;
        throw CaptureError(named(e.path()), named(e.problem()));
    }
    for (auto& w : analysis.warnings) w = named(std::move(w));
    printSomeWarnings(analysis.warnings, args.verbose);
    writeOutput(
        args.output,
        named(args.format == "json" ? hang::formatHangJson(analysis) : hang::formatHangText(analysis, args.verbose)),
        args.force);
    return analysis.verdict == hang::Verdict::Healthy ? 0 : 1;
}

}  // namespace

void addHangCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<HangArgs>();
    auto* cmd = app.add_subcommand("hang");
    describe(
        cmd, "Which rank a stuck job waits for, and collectives that disagree", "overlapscope hang runs/ --verbose",
        "Per communicator: the last collective each rank entered and completed, "
        "the collective the others wait in, the ranks that never entered it and what their hosts were last doing, "
        "and collectives the ranks called with a different type, size or datatype (desyncs).\nInputs: captures of "
        "the stuck or killed job (ours, e.g. taken by `attach` while it hangs; Nsight Systems exports; PyTorch "
        "traces), PyTorch Flight Recorder dumps (the pickles PyTorch writes, or JSON; the rank is the number at the "
        "end of the file name; a pickle is read as data, never run), or directories of them. Captures and dumps of "
        "one job given together are joined: the dump says which call each rank is in, the capture what its GPU did "
        "with it.\nBy default a short verdict: every stuck rank of every waiting group, what it last did, members "
        "absent from the inputs; --verbose adds each rank's progress and every warning.\nCollectives are numbered by "
        "the NCCL plugin's sequence numbers, PyTorch's (process "
        "group, Seq) or the Flight Recorder's sequence ids where the input has them, by each process group's calls "
        "in trace order in PyTorch traces without Seq, else by kernel order per type (each communicator's `source` "
        "says which).\nExit codes: 0 healthy, 1 a hang or a desync, 2 bad input.");
    cmd->add_option("INPUT", args->inputs, "Capture files, Flight Recorder dumps, or directories of them")->required();
    cmd->add_option("--format", args->format, "text (a short verdict; with --verbose each rank's progress too) or json")
        ->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("-o,--output", args->output, "Write to FILE instead of stdout")
        ->type_name("FILE")
        ->check(nonEmptyFileName());
    cmd->add_flag("--force", args->force, "Replace an existing output file");
    cmd->add_flag("-v,--verbose", args->verbose,
                  "After the verdict, each rank's progress per communicator with its evidence (entries, pg_status), "
                  "every desync and note, and every warning");
    cmd->add_option("--min-wait-ms", args->minWaitMs,
                    "A collective waited on for less than this before a capture ends is in flight, not hung (a "
                    "healthy job captured while running has some); 0 counts every unfinished one. Flight Recorder "
                    "dumps carry no time of their own: theirs always count")
        ->capture_default_str();
    args->scheduler.addTo(cmd,
                          "Read the files on the Dask cluster of this scheduler (tcp://HOST:PORT): each by a "
                          "worker (on the file's host for HOST:PATH inputs), sent here, and analysed here as in "
                          "one process (needs python3-distributed and the overlapscope Python module; "
                          "docs/cluster.md)");
    cmd->callback([&selected, args] { selected = [args] { return runHang(*args); }; });
}

}  // namespace osc::cli

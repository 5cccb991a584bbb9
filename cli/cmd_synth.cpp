// `overlapscope synth -o FILE|DIR`: synthetic captures from a workload model
// (analyzer/synth/README.md), or a plain kernel stream for benchmarks.
#include "analyzer/capture/capture_error.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "analyzer/synth/generic_synth.h"
#include "analyzer/synth/workload_synth.h"

#include <cstdio>
#include <filesystem>
#include <memory>

namespace osc::cli {
namespace {

struct SynthArgs {
    std::string output;
    bool force = false;
    std::string mode = "bucketed";
    synth::WorkloadSpec workload;
    synth::GenericSpec generic;
    uint64_t seed = 1;
    std::string host = "synth-host";
    int64_t pid = 4000;
    CLI::Option* kernelsOption = nullptr;
    CLI::Option* gradListOption = nullptr;
    CLI::Option* backwardListOption = nullptr;
    CLI::Option* layersOption = nullptr;
};

int runSynth(SynthArgs& args) {
    if (args.kernelsOption->count() > 0) {
        args.generic.seed = args.seed;
        args.generic.host = args.host;
        args.generic.pid = args.pid;
        args.generic.validate();
        if (!args.force && std::filesystem::exists(args.output))
            throw CaptureError(args.output, "already exists (use --force to replace it)");
        ProgressLine progress;
        synth::writeGeneric(args.generic, args.output, args.force,
                            [&](uint64_t done, uint64_t total) {
                                progress.show("writing " + args.output,
                                              static_cast<double>(done) / static_cast<double>(total));
                            });
        progress.done();
        std::printf("%s\n", args.output.c_str());
        return 0;
    }
    auto& w = args.workload;
    if (args.layersOption->count() == 0) {
        if (args.gradListOption->count() > 0) w.layers = static_cast<int>(w.gradBytesList.size());
        else if (args.backwardListOption->count() > 0) w.layers = static_cast<int>(w.backwardNsList.size());
    }
    w.mode = synth::parseOverlapMode(args.mode);
    w.seed = args.seed;
    w.host = args.host;
    w.basePid = args.pid;
    for (const auto& path : synth::writeWorkload(w, args.output, args.force))
        std::printf("%s\n", path.c_str());
    return 0;
}

}  // namespace

void addSynthCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<SynthArgs>();
    auto& w = args->workload;
    auto* cmd = app.add_subcommand(
        "synth",
        "Write synthetic captures whose answers are known (see analyzer/synth/README.md).\n"
        "Workload model: a data-parallel training job; each step runs the layers forward and "
        "backward on a compute stream and all-reduces gradients on a comm stream. Comm time of "
        "a collective = --alpha-ns + --algo-factor * bytes / --bandwidth-gbps.\n"
        "With --ranks 1 the output is one file; with more it is a directory holding "
        "<host>-<pid>-rank<R>.sqlite per rank. Prints the files written.\n"
        "Exit codes: 0 written, 2 bad options or an existing output without --force.");
    cmd->add_option("-o,--output", args->output, "Output file (one rank) or directory (several ranks)")
        ->required()
        ->type_name("FILE|DIR");
    cmd->add_flag("--force", args->force, "Replace existing output files");
    cmd->add_option("--mode", args->mode,
                    "How gradients are reduced: sequential (after the backward pass), per-param "
                    "(one all-reduce per layer) or bucketed (DDP buckets; default)")
        ->check(CLI::IsMember({"sequential", "per-param", "bucketed"}));
    cmd->add_flag("--comm-on-compute-stream", w.commOnComputeStream,
                  "Launch collectives on the compute stream (the common bug: they serialize)");
    cmd->add_option("--layers", w.layers, "Layers (default 12)");
    cmd->add_option("--forward-ns", w.forwardNs, "Forward compute per layer, ns (default 500000)");
    cmd->add_option("--backward-ns", w.backwardNs, "Backward compute per layer, ns (default 1000000)");
    cmd->add_option("--grad-bytes", w.gradBytesPerLayer,
                    "Gradient bytes per layer (default 8388608 = 8 MiB)");
    args->gradListOption =
        cmd->add_option("--grad-bytes-list", w.gradBytesList,
                        "Uneven layers: gradient bytes of layer 0, 1, ... comma-separated, one per layer "
                        "(replaces --grad-bytes; --layers defaults to how many are given)")
            ->delimiter(',')
            ->type_name("BYTES,...");
    args->backwardListOption =
        cmd->add_option("--backward-ns-list", w.backwardNsList,
                        "Uneven layers: backward compute ns of layer 0, 1, ... comma-separated, one per "
                        "layer (replaces --backward-ns)")
            ->delimiter(',')
            ->type_name("NS,...");
    args->layersOption = cmd->get_option("--layers");
    cmd->add_option("--bucket-mb", w.bucketMb,
                    "Bucket size in MiB: a bucket closes once it holds at least this much (default 25)");
    cmd->add_option("--alpha-ns", w.alphaNs, "Per-collective latency, ns (default 20000)");
    cmd->add_option("--bandwidth-gbps", w.bandwidthGBps, "Link bandwidth, GB/s (default 25)");
    cmd->add_option("--algo-factor", w.algoFactor,
                    "Bytes moved per payload byte; 2(n-1)/n models a ring all-reduce (default 1)");
    cmd->add_option("--ranks", w.ranks, "Ranks, one capture file each (default 1)");
    cmd->add_option("--steps", w.steps, "Training steps (default 5)");
    cmd->add_option("--jitter", w.jitter,
                    "Scale each duration by 1 + U(-J, J), seeded by --seed (default 0)");
    cmd->add_option("--optimizer-ns", w.optimizerNs,
                    "Optimizer kernel after the gradients are reduced, ns (default 0 = none)");
    cmd->add_option("--step-gap-ns", w.stepGapNs, "Idle GPU time between steps, ns (default 100000)");
    cmd->add_option("--interference", w.interference,
                    "Compute kernels that start while their rank's collective runs take F times "
                    "longer (default 1 = no interference)")
        ->type_name("F");
    cmd->add_option("--arrival-skew-ns", w.arrivalSkewNs,
                    "Per rank, comma-separated: rank r starts every step this many ns late, so it "
                    "arrives last at collectives (missing ranks: 0)")
        ->delimiter(',')
        ->type_name("NS,...");
    cmd->add_option("--clock-offset-ns", w.clockOffsetNs,
                    "Per rank, comma-separated: every time rank r records is off by this many ns, "
                    "like a host clock that disagrees (--align collectives undoes it)")
        ->delimiter(',')
        ->type_name("NS,...");
    cmd->add_option("--seed", args->seed, "Random seed for --jitter and --kernels (default 1)");
    cmd->add_option("--host", args->host, "Host name recorded in the capture (default synth-host)");
    cmd->add_option("--pid", args->pid, "Process id of rank 0; rank r gets pid + r (default 4000)");
    args->kernelsOption =
        cmd->add_option("--kernels", args->generic.kernels,
                        "Benchmark mode: write N kernels spread over --streams streams (the last "
                        "stream carries NCCL kernels), no steps or host calls; the workload "
                        "options are ignored")
            ->type_name("N");
    cmd->add_option("--streams", args->generic.streams, "Streams for --kernels (default 4)");
    cmd->callback([&selected, args] { selected = [args] { return runSynth(*args); }; });
}

}  // namespace osc::cli

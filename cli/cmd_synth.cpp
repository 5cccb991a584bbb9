// `overlapscope synth -o FILE|DIR`: synthetic captures from a workload model
// (analyzer/synth/README.md), or a plain kernel stream for benchmarks.
#include "analyzer/capture/capture_error.h"
#include "analyzer/synth/generic_synth.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/workload_synth.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/help_format.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>

namespace osc::cli {
namespace {

struct SynthArgs {
    std::string output;
    bool force = false;
    std::string workloadName = "data-parallel";
    std::string mode = "bucketed";
    synth::WorkloadSpec workload;
    synth::PipelineSpec pipeline;
    synth::AllToAllSpec alltoall;
    synth::GenericSpec generic;
    uint64_t seed = 1;
    std::string host = "synth-host";
    int64_t pid = 4000;
    CLI::Option* kernelsOption = nullptr;
    CLI::Option* gradListOption = nullptr;
    CLI::Option* backwardListOption = nullptr;
    CLI::Option* layersOption = nullptr;
    // Options shared by several workloads, bound to the data-parallel spec:
    // given ones are copied into the other models, whose defaults differ.
    std::map<std::string, CLI::Option*> shared;
    // Options of one workload only: name -> (workload, option).
    std::vector<std::pair<std::string, CLI::Option*>> only;
};

bool given(const SynthArgs& a, const std::string& name) {
    const auto it = a.shared.find(name);
    return it != a.shared.end() && it->second->count() > 0;
}

// An option of another workload is a mistake worth saying, not ignoring.
void refuseOtherWorkloads(const SynthArgs& a) {
    for (const auto& [workload, option] : a.only)
        if (option->count() > 0 && workload != a.workloadName)
            throw std::invalid_argument("synth: " + option->get_name() + " applies to --workload " + workload +
                                        ", not " + a.workloadName);
}

int runPattern(SynthArgs& args) {
    const auto& w = args.workload;
    std::vector<std::string> written;
    if (args.workloadName == "pipeline") {
        auto& p = args.pipeline;
        if (given(args, "--forward-ns")) p.forwardNs = w.forwardNs;
        if (given(args, "--backward-ns")) p.backwardNs = w.backwardNs;
        if (given(args, "--steps")) p.steps = w.steps;
        if (given(args, "--step-gap-ns")) p.stepGapNs = w.stepGapNs;
        if (given(args, "--ranks"))
            throw std::invalid_argument("synth: a pipeline has one rank per stage; use --stages");
        p.host = args.host;
        p.basePid = args.pid;
        written = synth::writePipeline(p, args.output, args.force);
    } else {
        auto& a = args.alltoall;
        if (given(args, "--ranks")) a.ranks = w.ranks;
        if (given(args, "--steps")) a.steps = w.steps;
        if (given(args, "--step-gap-ns")) a.stepGapNs = w.stepGapNs;
        if (given(args, "--alpha-ns")) a.alphaNs = w.alphaNs;
        if (given(args, "--bandwidth-gbps")) a.bandwidthGBps = w.bandwidthGBps;
        a.host = args.host;
        a.basePid = args.pid;
        written = synth::writeAllToAll(a, args.output, args.force);
    }
    for (const auto& path : written) std::printf("%s\n", path.c_str());
    return 0;
}

int runSynth(SynthArgs& args) {
    refuseOtherWorkloads(args);
    if (args.kernelsOption->count() > 0) {
        args.generic.seed = args.seed;
        args.generic.host = args.host;
        args.generic.pid = args.pid;
        args.generic.validate();
        // Whatever is at the name counts, a link (one that loops included)
        // too: asking where it leads would throw for a loop.
        std::error_code statusError;
        const auto there = std::filesystem::symlink_status(args.output, statusError);
        if (statusError && statusError != std::errc::no_such_file_or_directory)
            throw CaptureError(args.output, "cannot check whether it exists: " + statusError.message());
        if (!args.force && there.type() != std::filesystem::file_type::not_found)
            throw CaptureError(args.output, "already exists (use --force to replace it)");
        ProgressLine progress;
        synth::writeGeneric(args.generic, args.output, args.force, [&](uint64_t done, uint64_t total) {
            progress.show("writing " + args.output, static_cast<double>(done) / static_cast<double>(total));
        });
        progress.done();
        std::printf("%s\n", args.output.c_str());
        return 0;
    }
    if (args.workloadName != "data-parallel") return runPattern(args);
    auto& w = args.workload;
    if (args.layersOption->count() == 0) {
        if (args.gradListOption->count() > 0)
            w.layers = static_cast<int>(w.gradBytesList.size());
        else if (args.backwardListOption->count() > 0)
            w.layers = static_cast<int>(w.backwardNsList.size());
    }
    w.mode = synth::parseOverlapMode(args.mode);
    w.seed = args.seed;
    w.host = args.host;
    w.basePid = args.pid;
    for (const auto& path : synth::writeWorkload(w, args.output, args.force)) std::printf("%s\n", path.c_str());
    return 0;
}

}  // namespace

void addSynthCommand(CLI::App& app, CommandRunner& selected) {
    auto args = std::make_shared<SynthArgs>();
    auto& w = args->workload;
    auto* cmd = app.add_subcommand("synth");
    describe(cmd, "Write synthetic captures whose answers are known", "overlapscope synth --ranks 4 -o runs/",
             "The answers: analyzer/synth/README.md.\nWorkload model: a data-parallel training job; each step runs "
             "the layers forward and backward on a compute stream and all-reduces gradients on a comm stream. Comm "
             "time of a collective = --alpha-ns + --algo-factor * bytes / --bandwidth-gbps.\nWith --ranks 1 the "
             "output is one file; with more it is a directory holding <host>-<pid>-rank<R>.sqlite per rank. Prints "
             "the files written.\nExit codes: 0 written, 2 bad options or an existing output without --force.");
    cmd->add_option("-o,--output", args->output, "Output file (one rank) or directory (several ranks)")
        ->required()
        ->type_name("FILE|DIR")
        ->check(nonEmptyFileName());
    cmd->add_flag("--force", args->force, "Replace existing output files");
    cmd->add_option("--workload", args->workloadName,
                    "The model: data-parallel (default; the options below up to --desync-at-step), "
                    "pipeline (a 1F1B pipeline, one rank per stage) or alltoall (expert-parallel "
                    "all-to-all); analyzer/synth/README.md works out their answers")
        ->check(CLI::IsMember({"data-parallel", "pipeline", "alltoall"}));
    const auto only = [&](const std::string& workload, CLI::Option* option) {
        args->only.emplace_back(workload, option);
        return option;
    };
    only("data-parallel", cmd->add_option("--mode", args->mode,
                                          "How gradients are reduced: sequential (after the backward pass), per-param "
                                          "(one all-reduce per layer) or bucketed (DDP buckets; default)")
                              ->check(CLI::IsMember({"sequential", "per-param", "bucketed"})));
    only("data-parallel", cmd->add_flag("--comm-on-compute-stream", w.commOnComputeStream,
                                        "Launch collectives on the compute stream (the common bug: they serialize)"));
    only("data-parallel", cmd->add_option("--layers", w.layers, "Layers (default 12)"));
    args->shared["--forward-ns"] =
        cmd->add_option("--forward-ns", w.forwardNs,
                        "Forward compute per layer (pipeline: per micro-batch and stage), ns (default 500000)");
    args->shared["--backward-ns"] =
        cmd->add_option("--backward-ns", w.backwardNs,
                        "Backward compute per layer (pipeline: per micro-batch and stage), ns (default 1000000)");
    only("data-parallel",
         cmd->add_option("--grad-bytes", w.gradBytesPerLayer, "Gradient bytes per layer (default 8388608 = 8 MiB)"));
    args->gradListOption =
        only("data-parallel",
             cmd->add_option("--grad-bytes-list", w.gradBytesList,
                             "Uneven layers: gradient bytes of layer 0, 1, ... comma-separated, one per layer "
                             "(replaces --grad-bytes; --layers defaults to how many are given)")
                 ->delimiter(',')
                 ->type_name("BYTES,..."));
    args->backwardListOption =
        only("data-parallel",
             cmd->add_option("--backward-ns-list", w.backwardNsList,
                             "Uneven layers: backward compute ns of layer 0, 1, ... comma-separated, one per "
                             "layer (replaces --backward-ns)")
                 ->delimiter(',')
                 ->type_name("NS,..."));
    args->layersOption = cmd->get_option("--layers");
    only("data-parallel",
         cmd->add_option("--bucket-mb", w.bucketMb,
                         "Bucket size in MiB: a bucket closes once it holds at least this much (default 25)"));
    args->shared["--alpha-ns"] = cmd->add_option("--alpha-ns", w.alphaNs, "Per-collective latency, ns (default 20000)");
    args->shared["--bandwidth-gbps"] =
        cmd->add_option("--bandwidth-gbps", w.bandwidthGBps, "Link bandwidth, GB/s (default 25)");
    only("data-parallel",
         cmd->add_option("--algo-factor", w.algoFactor,
                         "Bytes moved per payload byte; 2(n-1)/n models a ring all-reduce (default 1)"));
    args->shared["--ranks"] =
        cmd->add_option("--ranks", w.ranks, "Ranks, one capture file each (default 1; alltoall: 4)");
    args->shared["--steps"] = cmd->add_option("--steps", w.steps, "Training steps (default 5; pipeline, alltoall: 3)");
    only("data-parallel",
         cmd->add_option("--jitter", w.jitter, "Scale each duration by 1 + U(-J, J), seeded by --seed (default 0)"));
    only("data-parallel", cmd->add_option("--optimizer-ns", w.optimizerNs,
                                          "Optimizer kernel after the gradients are reduced, ns (default 0 = none)"));
    args->shared["--step-gap-ns"] =
        cmd->add_option("--step-gap-ns", w.stepGapNs, "Idle GPU time between steps, ns (default 100000)");
    only("data-parallel", cmd->add_option("--interference", w.interference,
                                          "Compute kernels that start while their rank's collective runs take F times "
                                          "longer (default 1 = no interference)")
                              ->type_name("F"));
    only("data-parallel",
         cmd->add_option("--arrival-skew-ns", w.arrivalSkewNs,
                         "Per rank, comma-separated: rank r starts every step this many ns late, so it "
                         "arrives last at collectives (missing ranks: 0)")
             ->delimiter(',')
             ->type_name("NS,..."));
    only("data-parallel",
         cmd->add_option("--clock-offset-ns", w.clockOffsetNs,
                         "Per rank, comma-separated: every time rank r records is off by this many ns, "
                         "like a host clock that disagrees (--align collectives undoes it)")
             ->delimiter(',')
             ->type_name("NS,..."));
    only("data-parallel", cmd->add_option("--host-stall-rank", w.hostStallRank,
                                          "This rank's host spends --host-stall-ns in a --host-stall-name range "
                                          "before each step's first launch, so it arrives late (default -1 = none)")
                              ->type_name("R"));
    only("data-parallel",
         cmd->add_option("--host-stall-ns", w.hostStallNs, "See --host-stall-rank, ns (default 0)")->type_name("NS"));
    only("data-parallel",
         cmd->add_option("--host-stall-step", w.hostStallStep, "Stall in this step only (default -1 = every step)")
             ->type_name("S"));
    only("data-parallel",
         cmd->add_option("--host-stall-name", w.hostStallName, "The stall's NVTX range (default DataLoader.__next__)")
             ->type_name("NAME"));
    only("data-parallel", cmd->add_option("--slow-compute-rank", w.slowComputeRank,
                                          "This rank's compute kernels take --slow-compute-factor times longer "
                                          "(default -1 = none)")
                              ->type_name("R"));
    only("data-parallel",
         cmd->add_option("--slow-compute-factor", w.slowComputeFactor, "See --slow-compute-rank (default 1)")
             ->type_name("F"));
    only("data-parallel",
         cmd->add_option("--stall-rank", w.stallRank,
                         "A hang with a known answer: from --stall-at-step on this rank enters no collective; the "
                         "others wait in that step's first collective until the capture stops, 5 s after the last "
                         "of them arrived (`overlapscope hang` finds it)")
             ->type_name("R"));
    only("data-parallel", cmd->add_option("--stall-at-step", w.stallAtStep, "See --stall-rank")->type_name("S"));
    only("data-parallel",
         cmd->add_option("--desync-rank", w.desyncRank,
                         "A desync with a known answer: this rank calls the first collective of --desync-at-step "
                         "with twice the bytes of the others")
             ->type_name("R"));
    only("data-parallel", cmd->add_option("--desync-at-step", w.desyncAtStep, "See --desync-rank")->type_name("S"));
    auto& pp = args->pipeline;
    only("pipeline", cmd->add_option("--stages", pp.stages, "Pipeline: stages, one rank each (default 4)"));
    only("pipeline",
         cmd->add_option("--microbatches", pp.microbatches, "Pipeline: micro-batches per step (default 8)"));
    only("pipeline", cmd->add_option("--transfer-ns", pp.transferNs,
                                     "Pipeline: time to move an activation or gradient once sender and receiver are "
                                     "both there, ns (default 0: the textbook bubble exactly)"));
    only("pipeline", cmd->add_option("--activation-bytes", pp.activationBytes,
                                     "Pipeline: bytes per send, as the NCCL plugin rows say (default 16777216)"));
    only("pipeline", cmd->add_option("--slow-stage", pp.slowStage,
                                     "Pipeline: this stage computes --slow-factor times "
                                     "longer (default -1 = none)"));
    only("pipeline", cmd->add_option("--slow-factor", pp.slowFactor, "Pipeline: see --slow-stage (default 1)"));
    auto& aa = args->alltoall;
    only("alltoall", cmd->add_option("--pair-bytes", aa.pairBytes,
                                     "All-to-all: bytes each rank sends each other rank (default 4194304)"));
    only("alltoall", cmd->add_option("--imbalance", aa.imbalance,
                                     "All-to-all: every rank sends F times --pair-bytes to --hot-rank in the "
                                     "dispatch, and gets it back in the combine (default 1)")
                         ->type_name("F"));
    only("alltoall", cmd->add_option("--hot-rank", aa.hotRank, "All-to-all: the overloaded rank (default 0)"));
    only("alltoall",
         cmd->add_option("--gate-ns", aa.gateNs, "All-to-all: router kernel before the dispatch, ns (default 200000)"));
    only("alltoall", cmd->add_option("--expert-ns", aa.expertNs,
                                     "All-to-all: expert GEMM between dispatch and combine, ns (default 1000000)"));
    only("alltoall", cmd->add_option("--combine-ns", aa.combineNs,
                                     "All-to-all: output kernel after the combine, ns (default 200000)"));
    cmd->add_option("--seed", args->seed, "Random seed for --jitter and --kernels (default 1)");
    cmd->add_option("--host", args->host, "Host name recorded in the capture (default synth-host)");
    only("data-parallel", cmd->add_option("--ranks-per-host", w.ranksPerHost,
                                          "Spread the ranks over hosts: rank r runs on <host>-<r / N> as local rank "
                                          "r % N, GPU r % N (default 0 = all on --host)")
                              ->type_name("N"));
    cmd->add_option("--pid", args->pid, "Process id of rank 0; rank r gets pid + r (default 4000)");
    args->kernelsOption = cmd->add_option("--kernels", args->generic.kernels,
                                          "Benchmark mode: write N kernels spread over --streams streams (the last "
                                          "stream carries NCCL kernels), no steps or host calls; the workload "
                                          "options are ignored")
                              ->type_name("N");
    cmd->add_option("--streams", args->generic.streams, "Streams for --kernels (default 4)");
    cmd->callback([&selected, args] { selected = [args] { return runSynth(*args); }; });
}

}  // namespace osc::cli

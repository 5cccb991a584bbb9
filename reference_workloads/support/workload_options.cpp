#include "reference_workloads/support/workload_options.h"

#include "reference_workloads/support/cli_args.h"
#include "reference_workloads/support/workload_error.h"

namespace oscwl {
namespace {

constexpr std::int64_t kMaxDim = 1 << 20;

void declare_common(CliArgs& args) {
    args.add_value("steps", "20", "measured steps");
    args.add_value("warmup", "5", "warm-up steps before measuring");
    args.add_value("dtype", "fp32", "fp32|bf16 (GEMM inputs, gradients and collectives)");
    args.add_value("comm", "nccl",
                   "nccl|copies; copies replaces each collective by device<->host copies "
                   "of the same bytes (one GPU, world size 1)");
    args.add_value("gpus", "0", "N>0: one process drives N GPUs with one thread each");
    args.add_value("ranks", "0",
                   "N>1: start N rank processes on this host; ranks sharing a GPU get their own "
                   "NCCL_HOSTID (NCCL's network transport), so one GPU runs real collectives");
    args.add_value("rendezvous", "",
                   "file:/path or tcp://host:port to exchange the NCCL id "
                   "(default: tcp://MASTER_ADDR:MASTER_PORT+1 when set)");
    args.add_value("seed", "1234", "seed of the deterministic initialisation");
    args.add_flag("no-check", "skip the result check");
    args.add_flag("verbose", "print every measured step");
}

CommonOptions read_common(const CliArgs& args, int argc, const char* const* argv) {
    CommonOptions c;
    c.argv.assign(argv, argv + argc);
    c.steps = static_cast<int>(args.integer("steps", 1, 1000000));
    c.warmup = static_cast<int>(args.integer("warmup", 0, 1000000));
    c.dtype = args.choice("dtype", {"fp32", "bf16"}) == "bf16" ? DType::bf16 : DType::fp32;
    c.comm = args.choice("comm", {"nccl", "copies"}) == "copies" ? CommBackend::copies : CommBackend::nccl;
    c.gpus = static_cast<int>(args.integer("gpus", 0, 1024));
    c.ranks = static_cast<int>(args.integer("ranks", 0, 64));
    c.rendezvous = args.text("rendezvous");
    if (!c.rendezvous.empty() && c.rendezvous.rfind("file:", 0) != 0 && c.rendezvous.rfind("tcp://", 0) != 0)
        throw UsageError("--rendezvous must start with file: or tcp://, got '" + c.rendezvous + "'");
    c.seed = static_cast<std::uint64_t>(args.integer("seed", 0, INT64_MAX));
    c.check = !args.flag("no-check");
    c.verbose = args.flag("verbose");
    if (c.comm == CommBackend::copies && c.gpus > 1)
        throw UsageError("--comm copies runs one rank on one GPU; it cannot be combined with --gpus " +
                         std::to_string(c.gpus));
    if (c.ranks > 1 && c.comm == CommBackend::copies)
        throw UsageError("--comm copies runs one rank; it cannot be combined with --ranks " + std::to_string(c.ranks));
    if (c.ranks > 1 && c.gpus > 0)
        throw UsageError("--ranks starts one process per rank; it cannot be combined with --gpus");
    return c;
}

}  // namespace

DdpOptions parse_ddp_options(int argc, const char* const* argv) {
    CliArgs args("ddp_overlap",
                 "Data-parallel MLP training step: cuBLAS forward/backward, gradient all-reduce\n"
                 "with or without overlap, SGD update. NVTX ranges 'step N', 'forward',\n"
                 "'backward', 'optimizer'.");
    declare_common(args);
    args.add_value("hidden", "1024", "hidden size (weights are hidden x hidden)");
    args.add_value("batch", "1024", "samples per rank");
    args.add_value("layers", "16", "number of linear layers");
    args.add_value("mode", "bucketed",
                   "none|sequential|per-param|bucketed gradient all-reduce, or zero1: buckets reduce-scattered, "
                   "SGD on this rank's shard, parameters all-gathered under the next step's forward");
    args.add_value("bucket-mb", "25", "bucket capacity in MiB (modes bucketed and zero1)");
    args.add_value("lr", "0.1", "SGD learning rate (loss: mean squared output)");
    args.add_flag("cuda-graph", "capture one training step into a CUDA graph once, then replay the graph every step");
    args.parse(argc, argv);

    DdpOptions o;
    o.common = read_common(args, argc, argv);
    o.hidden = static_cast<int>(args.integer("hidden", 1, kMaxDim));
    o.batch = static_cast<int>(args.integer("batch", 1, kMaxDim));
    o.layers = static_cast<int>(args.integer("layers", 1, 4096));
    std::string mode = args.choice("mode", {"none", "sequential", "per-param", "bucketed", "zero1"});
    o.mode = mode == "none"         ? DdpMode::none
             : mode == "sequential" ? DdpMode::sequential
             : mode == "per-param"  ? DdpMode::per_param
             : mode == "zero1"      ? DdpMode::zero1
                                    : DdpMode::bucketed;
    o.bucket_mb = args.real("bucket-mb", 0.0, 1e6);
    if (args.given("bucket-mb") && o.mode != DdpMode::bucketed && o.mode != DdpMode::zero1)
        throw UsageError("ddp_overlap: --bucket-mb applies only to --mode bucketed or zero1");
    o.lr = args.real("lr", 0.0, 10.0);
    o.cuda_graph = args.flag("cuda-graph");
    if (o.cuda_graph && o.mode == DdpMode::zero1)
        throw UsageError("ddp_overlap: --cuda-graph is not available with --mode zero1");
    return o;
}

TpOptions parse_tp_options(int argc, const char* const* argv) {
    CliArgs args("tp_overlap",
                 "Tensor-parallel MLP block (sequence-parallel layout): all-gather ->\n"
                 "column-parallel GEMM -> row-parallel GEMM -> reduce-scatter, serial or\n"
                 "pipelined in chunks so each chunk's communication hides behind another\n"
                 "chunk's GEMM. NVTX ranges 'step N', 'forward'.");
    declare_common(args);
    args.add_value("hidden", "4096", "model hidden size");
    args.add_value("ffn", "", "MLP inner size, split across ranks (default 4 x hidden)");
    args.add_value("tokens", "8192", "tokens (sequence x batch), split across ranks");
    args.add_value("mode", "pipelined",
                   "serial|pipelined|ring; ring passes token chunks around the ranks with point-to-point "
                   "send/receive while each rank multiplies the chunk it holds");
    args.add_value("chunks", "4",
                   "chunks of the pipelined schedule; with --mode ring and one rank, the ring positions "
                   "(the exchanges go to the rank itself)");
    args.parse(argc, argv);

    TpOptions o;
    o.common = read_common(args, argc, argv);
    o.hidden = static_cast<int>(args.integer("hidden", 1, kMaxDim));
    o.ffn = args.given("ffn") ? static_cast<int>(args.integer("ffn", 1, kMaxDim)) : 4 * o.hidden;
    o.tokens = static_cast<int>(args.integer("tokens", 1, kMaxDim));
    const std::string mode = args.choice("mode", {"serial", "pipelined", "ring"});
    o.mode = mode == "serial" ? TpMode::serial : mode == "ring" ? TpMode::ring : TpMode::pipelined;
    o.chunks = static_cast<int>(args.integer("chunks", 1, 1024));
    if (args.given("chunks") && o.mode == TpMode::serial)
        throw UsageError("tp_overlap: --chunks applies only to --mode pipelined or ring");
    if (o.mode == TpMode::serial) o.chunks = 1;
    return o;
}

FsdpOptions parse_fsdp_options(int argc, const char* const* argv) {
    CliArgs args("fsdp_prefetch",
                 "FSDP-style training step: each layer's weights are sharded across ranks,\n"
                 "all-gathered before use (optionally prefetched 1 or 2 layers ahead on a\n"
                 "communication stream), gradients reduce-scattered in backward. NVTX ranges\n"
                 "'step N', 'forward', 'backward', 'optimizer'.");
    declare_common(args);
    args.add_value("hidden", "4096", "hidden size (weights are hidden x hidden)");
    args.add_value("batch", "1024", "samples per rank");
    args.add_value("layers", "8", "number of linear layers");
    args.add_value("prefetch", "1", "0|1|2 layers gathered ahead");
    args.add_value("lr", "0.1", "SGD learning rate (loss: mean squared output)");
    args.parse(argc, argv);

    FsdpOptions o;
    o.common = read_common(args, argc, argv);
    o.hidden = static_cast<int>(args.integer("hidden", 1, kMaxDim));
    o.batch = static_cast<int>(args.integer("batch", 1, kMaxDim));
    o.layers = static_cast<int>(args.integer("layers", 1, 4096));
    o.prefetch = static_cast<int>(args.integer("prefetch", 0, 2));
    o.lr = args.real("lr", 0.0, 10.0);
    return o;
}

PpOptions parse_pp_options(int argc, const char* const* argv) {
    CliArgs args("pp_overlap",
                 "Pipeline-parallel training step: one stage per rank, each a stack of linear\n"
                 "layers; micro-batches' activations go forward and their gradients backward\n"
                 "with NCCL send/receive, in GPipe or 1F1B order, blocking the compute stream\n"
                 "or (--overlap) queued on a communication stream ahead of need. NVTX ranges\n"
                 "'step N', 'fwd mb N', 'bwd mb N'. No optimizer: the weights stay fixed, so the\n"
                 "check can recompute the whole model on one GPU.");
    declare_common(args);
    args.add_value("hidden", "1024", "hidden size (weights are hidden x hidden)");
    args.add_value("mb-size", "256", "tokens (columns) of one micro-batch");
    args.add_value("layers", "4", "linear layers per stage");
    args.add_value("microbatches", "8", "micro-batches per step");
    args.add_value("schedule", "1f1b", "gpipe|1f1b order of the forward and backward passes");
    args.add_flag("overlap",
                  "send and receive on a communication stream, receives posted ahead of the pass "
                  "that needs them, instead of blocking the compute stream between passes");
    args.parse(argc, argv);

    PpOptions o;
    o.common = read_common(args, argc, argv);
    o.hidden = static_cast<int>(args.integer("hidden", 1, kMaxDim));
    o.mb_tokens = static_cast<int>(args.integer("mb-size", 1, kMaxDim));
    o.layers = static_cast<int>(args.integer("layers", 1, 1024));
    o.microbatches = static_cast<int>(args.integer("microbatches", 1, 1024));
    o.schedule =
        args.choice("schedule", {"gpipe", "1f1b"}) == "gpipe" ? PipeSchedule::gpipe : PipeSchedule::one_f_one_b;
    o.overlap = args.flag("overlap");
    return o;
}

MoeOptions parse_moe_options(int argc, const char* const* argv) {
    CliArgs args("moe_alltoall",
                 "Expert-parallel MoE layer: one expert per rank, tokens dispatched to their\n"
                 "expert and combined back with all-to-alls made of grouped NCCL send/receive,\n"
                 "a shared expert on every token. Serial, or (--overlap) in chunks so one\n"
                 "chunk's all-to-all runs under another chunk's expert GEMMs and the shared\n"
                 "expert. --imbalance F gives rank 0 F times the tokens. NVTX ranges 'step N',\n"
                 "'forward'.");
    declare_common(args);
    args.add_value("hidden", "1024", "model hidden size");
    args.add_value("ffn", "4096", "expert inner size");
    args.add_value("tokens", "2048", "tokens per rank (rank 0: times --imbalance)");
    args.add_value("imbalance", "1", "rank 0 routes this many times the others' tokens (1 = balanced)");
    args.add_flag("overlap",
                  "split the tokens in --chunks: each chunk's all-to-all under other chunks' GEMMs "
                  "and the shared expert, instead of dispatch, experts, combine, shared expert in turn");
    args.add_value("chunks", "4", "chunks of the overlapped schedule");
    args.parse(argc, argv);

    MoeOptions o;
    o.common = read_common(args, argc, argv);
    o.hidden = static_cast<int>(args.integer("hidden", 1, kMaxDim));
    o.ffn = static_cast<int>(args.integer("ffn", 1, kMaxDim));
    o.tokens = static_cast<int>(args.integer("tokens", 1, kMaxDim));
    o.imbalance = args.real("imbalance", 1.0, 64.0);
    o.overlap = args.flag("overlap");
    o.chunks = static_cast<int>(args.integer("chunks", 1, 1024));
    if (args.given("chunks") && !o.overlap) throw UsageError("moe_alltoall: --chunks applies only with --overlap");
    if (!o.overlap) o.chunks = 1;
    return o;
}

void validate_for_world(const MoeOptions& o, int world) {
    // Every rank then routes at least `chunks` tokens to every expert, so no
    // chunk's all-to-all is empty.
    if (static_cast<long long>(o.tokens) < static_cast<long long>(world) * o.chunks)
        throw UsageError("moe_alltoall: --tokens " + std::to_string(o.tokens) + " must be at least the world size " +
                         std::to_string(world) + " x " + std::to_string(o.chunks) + " chunks");
}

void validate_for_world(const DdpOptions& o, int world) {
    const long long elems = static_cast<long long>(o.hidden) * o.hidden;
    if (o.mode == DdpMode::zero1 && elems % world != 0)
        throw UsageError("ddp_overlap: hidden x hidden = " + std::to_string(elems) +
                         " must be divisible by the world size " + std::to_string(world) +
                         " to shard the buckets (--mode zero1)");
}

void validate_for_world(const TpOptions& o, int world) {
    if (o.ffn % world != 0)
        throw UsageError("tp_overlap: --ffn " + std::to_string(o.ffn) + " must be divisible by the world size " +
                         std::to_string(world));
    if (o.tokens % world != 0)
        throw UsageError("tp_overlap: --tokens " + std::to_string(o.tokens) + " must be divisible by the world size " +
                         std::to_string(world));
    // A ring of several ranks has one position per rank; --chunks does not apply.
    if ((o.mode != TpMode::ring || world == 1) && o.tokens / world < o.chunks)
        throw UsageError("tp_overlap: " + std::to_string(o.tokens / world) + " tokens per rank cannot form " +
                         std::to_string(o.chunks) + " chunks");
}

void validate_for_world(const FsdpOptions& o, int world) {
    const long long elems = static_cast<long long>(o.hidden) * o.hidden;
    if (elems % world != 0)
        throw UsageError("fsdp_prefetch: hidden x hidden = " + std::to_string(elems) +
                         " must be divisible by the world size " + std::to_string(world));
}

const char* to_string(DType d) { return d == DType::bf16 ? "bf16" : "fp32"; }
const char* to_string(CommBackend c) { return c == CommBackend::copies ? "copies" : "nccl"; }
const char* to_string(DdpMode m) {
    switch (m) {
        case DdpMode::none:
            return "none";
        case DdpMode::sequential:
            return "sequential";
        case DdpMode::per_param:
            return "per-param";
        case DdpMode::bucketed:
            return "bucketed";
        case DdpMode::zero1:
            return "zero1";
    }
    return "?";
}
const char* to_string(TpMode m) {
    switch (m) {
        case TpMode::serial:
            return "serial";
        case TpMode::pipelined:
            return "pipelined";
        case TpMode::ring:
            return "ring";
    }
    return "?";
}
std::size_t dtype_bytes(DType d) { return d == DType::bf16 ? 2 : 4; }

}  // namespace oscwl

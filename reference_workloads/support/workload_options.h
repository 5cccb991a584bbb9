// Typed options of the three reference workloads, parsed from argv. Shape
// checks that depend on the world size (divisibility of shards and chunks)
// are separate because the world size is known only after launch detection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference_workloads/support/pipeline_schedule.h"

namespace oscwl {

enum class DType { fp32, bf16 };
enum class CommBackend { nccl, copies };

struct CommonOptions {
    int steps = 20;
    int warmup = 5;
    DType dtype = DType::fp32;
    CommBackend comm = CommBackend::nccl;
    int gpus = 0;            // >0: single process, one thread per GPU
    int ranks = 0;           // >1: start this many rank processes on this host (local_ranks.h)
    std::string rendezvous;  // "file:/path" or "tcp://host:port"; empty = from env
    bool check = true;
    bool verbose = false;
    std::uint64_t seed = 1234;
    std::vector<std::string> argv;  // the command line, for --ranks to start the ranks with
};

// zero1: ZeRO stage 1 — gradient buckets reduce-scattered, SGD on this rank's
// shard, parameters all-gathered at the start of the next step under its forward.
enum class DdpMode { none, sequential, per_param, bucketed, zero1 };

struct DdpOptions {
    CommonOptions common;
    int hidden = 1024;
    int batch = 1024;
    int layers = 16;
    DdpMode mode = DdpMode::bucketed;
    double bucket_mb = 25.0;
    double lr = 0.1;
    bool cuda_graph = false;  // capture one step into a CUDA graph, replay it every step
};

// ring: ring-exchange P2P (support/ring_schedule.h) instead of collectives.
enum class TpMode { serial, pipelined, ring };

struct TpOptions {
    CommonOptions common;
    int hidden = 4096;
    int ffn = 16384;
    int tokens = 8192;
    TpMode mode = TpMode::pipelined;
    int chunks = 4;  // pipelined: chunks; ring: ring positions when there is one rank
};

struct FsdpOptions {
    CommonOptions common;
    int hidden = 4096;
    int batch = 1024;
    int layers = 8;
    int prefetch = 1;
    double lr = 0.1;
};

// pp_overlap: one pipeline stage per rank.
struct PpOptions {
    CommonOptions common;
    int hidden = 1024;
    int mb_tokens = 256;  // columns of one micro-batch's activations
    int layers = 4;       // per stage
    int microbatches = 8;
    PipeSchedule schedule = PipeSchedule::one_f_one_b;
    bool overlap = false;
};

// moe_alltoall: one expert per rank (support/alltoall_plan.h).
struct MoeOptions {
    CommonOptions common;
    int hidden = 1024;
    int ffn = 4096;          // expert inner size
    int tokens = 2048;       // per rank before --imbalance
    double imbalance = 1.0;  // rank 0 holds imbalance x tokens
    bool overlap = false;
    int chunks = 4;  // with --overlap
};

// Each throws HelpRequested for --help and UsageError for bad input.
DdpOptions parse_ddp_options(int argc, const char* const* argv);
TpOptions parse_tp_options(int argc, const char* const* argv);
FsdpOptions parse_fsdp_options(int argc, const char* const* argv);
PpOptions parse_pp_options(int argc, const char* const* argv);
MoeOptions parse_moe_options(int argc, const char* const* argv);

// Shape constraints that need the world size; UsageError when violated.
void validate_for_world(const DdpOptions& o, int world);
void validate_for_world(const TpOptions& o, int world);
void validate_for_world(const FsdpOptions& o, int world);
void validate_for_world(const MoeOptions& o, int world);

const char* to_string(DType d);
const char* to_string(CommBackend c);
const char* to_string(DdpMode m);
const char* to_string(TpMode m);
std::size_t dtype_bytes(DType d);

}  // namespace oscwl

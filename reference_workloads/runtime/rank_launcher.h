// Starts the ranks of a workload and gives each a communicator:
//  - one process per GPU under torchrun / srun / mpirun (NCCL id exchanged
//    through --rendezvous, or MASTER_ADDR/MASTER_PORT);
//  - one process driving N GPUs with one thread each (--gpus N, ncclCommInitAll);
//  - one process, one GPU, collectives replaced by copies (--comm copies).
#pragma once

#include <functional>
#include <string>

#include "reference_workloads/runtime/collectives.h"
#include "reference_workloads/support/workload_options.h"

namespace oscwl {

struct RankContext {
    int rank = 0;
    int world = 1;
    int device = 0;
    Collectives* coll = nullptr;
    std::string launch;  // how this rank was started, printed by rank 0
    bool prints() const { return rank == 0; }
};

using RankBody = std::function<void(RankContext&)>;

// Runs `body` once per local rank; returns when all have finished. Errors
// propagate as exceptions (in thread mode a failing rank ends the process,
// since its peers would otherwise wait in NCCL forever).
void run_ranks(const CommonOptions& options, const std::string& program, const RankBody& body);

// Maps exceptions to one stderr line and the exit code: help 0, usage 2,
// anything else 1.
int guarded_main(const std::string& program, const std::function<void()>& main_body);

}  // namespace oscwl

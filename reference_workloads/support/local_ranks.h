// --ranks N: one command starts N rank processes on this host, each with the
// launcher variables torchrun would give it (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE) and a file rendezvous in a private temporary directory
// (OSC_RENDEZVOUS). With fewer GPUs than ranks, the ranks share GPUs and the
// launcher gives each its own NCCL_HOSTID (launch_env.h): the way to run
// real NCCL collectives on one GPU. The parent touches no GPU, so under
// `overlapscope run` only the ranks load the agent, one capture each.
#pragma once

#include <string>
#include <vector>

namespace oscwl {

// True when this process is one of the ranks a --ranks parent started.
bool is_spawned_rank();

// Runs `argv` (argv[0] an executable path) as `ranks` processes and waits for
// all of them. When one fails, the others are stopped (SIGTERM, then SIGKILL
// after `grace_s`), since they would wait for it in NCCL forever. SIGINT and
// SIGTERM sent to this process are passed on to the ranks. Returns 0 when
// every rank exited 0, else the first failing rank's exit code (128+signal
// for a signal); `failure` then says which rank and how.
int run_local_ranks(int ranks, const std::vector<std::string>& argv, std::string& failure, double grace_s = 10);

}  // namespace oscwl

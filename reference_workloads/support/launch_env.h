// Rank, world size and local rank of this process, read from the variables
// that launchers set: torchrun (RANK, WORLD_SIZE, LOCAL_RANK), Open MPI's
// mpirun (OMPI_COMM_WORLD_*), SLURM srun (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID). Without any of them the process is rank 0 of 1.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oscwl {

struct LaunchEnv {
    int rank = 0;
    int world = 1;
    int local_rank = 0;
    int local_world = 0;          // ranks on this host (LOCAL_WORLD_SIZE...); 0 = not said
    std::string source = "none";  // which launcher's variables were used
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// The process environment (getenv).
EnvLookup process_env();

// UsageError for malformed or inconsistent values (rank >= world, ...).
LaunchEnv detect_launch_env(const EnvLookup& env);

// The rendezvous to use when --rendezvous was not given: OSC_RENDEZVOUS
// (set by --ranks for the ranks it starts), else MASTER_ADDR and MASTER_PORT
// (torchrun sets them; its own store holds MASTER_PORT, so we take the next
// port). Empty when none is set.
std::string default_rendezvous(const EnvLookup& env);

// NCCL refuses two ranks on one GPU ("Duplicate GPU detected") unless they
// look like different hosts. When this host runs more ranks than it has
// GPUs, each rank gets its own NCCL_HOSTID, so NCCL connects them through its
// network transport; and when every rank is on this host, that transport
// uses the loopback interface (NCCL_SOCKET_IFNAME=lo). Variables the user set
// are kept. Returns the variables to set (empty when the GPUs suffice).
std::vector<std::pair<std::string, std::string>> shared_gpu_nccl_env(const LaunchEnv& launch, int devices,
                                                                     const EnvLookup& env);

}  // namespace oscwl

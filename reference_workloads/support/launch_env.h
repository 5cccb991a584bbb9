// Rank, world size and local rank of this process, read from the variables
// that launchers set: torchrun (RANK, WORLD_SIZE, LOCAL_RANK), Open MPI's
// mpirun (OMPI_COMM_WORLD_*), SLURM srun (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID). Without any of them the process is rank 0 of 1.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace oscwl {

struct LaunchEnv {
    int rank = 0;
    int world = 1;
    int local_rank = 0;
    std::string source = "none";  // which launcher's variables were used
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// The process environment (getenv).
EnvLookup process_env();

// UsageError for malformed or inconsistent values (rank >= world, ...).
LaunchEnv detect_launch_env(const EnvLookup& env);

// The rendezvous to use when --rendezvous was not given: MASTER_ADDR and
// MASTER_PORT (torchrun sets them; its own store holds MASTER_PORT, so we
// take the next port). Empty when they are not set.
std::string default_rendezvous(const EnvLookup& env);

}  // namespace oscwl

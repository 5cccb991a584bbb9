// Who this process is: host, pid, rank and command line, and the capture file
// names derived from them.
#pragma once

#include <cstdint>
#include <string>

namespace osc::agent {

struct ProcessIdentity {
    std::string host;
    int64_t pid = 0;
    int rank = -1, localRank = -1, worldSize = -1;
    std::string commandLine;  // argv joined by spaces
    std::string executable;   // basename of argv[0]
};

// Reads /proc/self and the launcher variables: RANK / OMPI_COMM_WORLD_RANK /
// SLURM_PROCID, LOCAL_RANK / OMPI_COMM_WORLD_LOCAL_RANK / SLURM_LOCALID,
// WORLD_SIZE / OMPI_COMM_WORLD_SIZE / SLURM_NTASKS.
ProcessIdentity currentProcessIdentity();

// "<dir>/<host>-<pid>[-rank<R>][-<N>].sqlite": N is the capture's sequence
// number in this process from the second capture on; an existing file is
// never reused (N counts up until the name and its -wal, -shm and -journal
// names are free, links included: a planted name is passed over).
std::string captureFileName(const std::string& dir, const ProcessIdentity& who, uint64_t sequence);

}  // namespace osc::agent

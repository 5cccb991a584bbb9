// What a process's environment and /proc say about it, for the agents that
// do not answer (`ps` still lists them with their rank and command) and for
// the agent's own identity: one list of launcher variables for both.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace osc::control {

// The launcher variables a rank is read from, in order: torchrun, Open MPI,
// SLURM, PMI.
inline constexpr const char* kRankVariables[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"};
// The job's name: `overlapscope run --job` (OVERLAPSCOPE_JOB), else SLURM's job id.
inline constexpr const char* kJobVariables[] = {"OVERLAPSCOPE_JOB", "SLURM_JOB_ID"};

// Looks a variable up: null when unset. The agent passes getenv; /proc
// readers pass a process's initial environment.
using VariableLookup = std::function<const char*(const char* name)>;

// The first of `names` set to a whole number from 0 to 2^30, else -1.
template <size_t N>
int firstWholeNumber(const char* const (&names)[N], const VariableLookup& lookup);
int firstWholeNumber(const char* const* names, size_t count, const VariableLookup& lookup);
template <size_t N>
int firstWholeNumber(const char* const (&names)[N], const VariableLookup& lookup) {
    return firstWholeNumber(names, N, lookup);
}
// The first of `names` set and not empty, else "".
std::string firstText(const char* const* names, size_t count, const VariableLookup& lookup);

struct ProcessFacts {
    int rank = -1;
    std::string job;
    std::string commandLine;  // argv joined by spaces
    // The state letter of /proc/PID/stat: 'T' stopped by a signal, 't'
    // stopped by a debugger, 'D' in uninterruptible sleep, 'Z' a zombie.
    char state = 0;
};

// Nullopt when /proc holds nothing readable for `pid` (gone, or another
// user's process, whose environment is not ours to read).
std::optional<ProcessFacts> processFacts(int64_t pid);

}  // namespace osc::control

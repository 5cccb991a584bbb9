#include "reference_workloads/support/launch_env.h"

#include <cstdlib>

#include "reference_workloads/support/workload_error.h"

namespace oscwl {
namespace {

int parse_count(const std::string& var, const std::string& value, int min) {
    char* end = nullptr;
    long v = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || v < min || v > 1000000)
        throw UsageError("environment variable " + var + "='" + value +
                         "' is not a valid integer >= " + std::to_string(min));
    return static_cast<int>(v);
}

struct Scheme {
    const char* name;
    const char* rank;
    const char* world;
    const char* local_rank;
    const char* local_world;
};

// Order matters: torchrun under SLURM sets both families; the explicit
// RANK/WORLD_SIZE describe the processes that actually run the workload.
constexpr Scheme kSchemes[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
};

}  // namespace

EnvLookup process_env() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (!v) return std::nullopt;
        return std::string(v);
    };
}

LaunchEnv detect_launch_env(const EnvLookup& env) {
    for (const Scheme& s : kSchemes) {
        auto rank = env(s.rank);
        auto world = env(s.world);
        if (!rank && !world) continue;
        if (!rank || !world)
            throw UsageError(std::string("environment sets ") + (rank ? s.rank : s.world) + " but not " +
                             (rank ? s.world : s.rank));
        LaunchEnv e;
        e.source = s.name;
        e.rank = parse_count(s.rank, *rank, 0);
        e.world = parse_count(s.world, *world, 1);
        if (e.rank >= e.world)
            throw UsageError(std::string(s.rank) + "=" + *rank + " is not below " + s.world + "=" + *world);
        auto local = env(s.local_rank);
        // Without a local rank every process is assumed to be on its own node.
        e.local_rank = local ? parse_count(s.local_rank, *local, 0) : 0;
        // SLURM writes "8" or "8(x2)"; only a plain count is taken.
        auto local_world = env(s.local_world);
        if (local_world && local_world->find_first_not_of("0123456789") == std::string::npos && !local_world->empty())
            e.local_world = parse_count(s.local_world, *local_world, 1);
        return e;
    }
    return LaunchEnv{};
}

std::string default_rendezvous(const EnvLookup& env) {
    if (auto own = env("OSC_RENDEZVOUS"); own && !own->empty()) return *own;
    auto addr = env("MASTER_ADDR");
    auto port = env("MASTER_PORT");
    if (!addr || !port || addr->empty()) return "";
    int p = parse_count("MASTER_PORT", *port, 1);
    if (p >= 65535) throw UsageError("MASTER_PORT=" + *port + " leaves no next port for the NCCL id");
    return "tcp://" + *addr + ":" + std::to_string(p + 1);
}

std::vector<std::pair<std::string, std::string>> shared_gpu_nccl_env(const LaunchEnv& launch, int devices,
                                                                     const EnvLookup& env) {
    std::vector<std::pair<std::string, std::string>> set;
    if (launch.world < 2 || devices < 1 || launch.local_world <= devices) return set;
    if (!env("NCCL_HOSTID")) set.emplace_back("NCCL_HOSTID", "osc-rank" + std::to_string(launch.rank));
    if (launch.local_world == launch.world && !env("NCCL_SOCKET_IFNAME")) set.emplace_back("NCCL_SOCKET_IFNAME", "lo");
    return set;
}

}  // namespace oscwl

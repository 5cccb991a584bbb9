#include "reference_workloads/runtime/rank_launcher.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "reference_workloads/runtime/cuda_check.h"
#include "reference_workloads/support/launch_env.h"
#include "reference_workloads/support/local_ranks.h"
#include "reference_workloads/support/rendezvous.h"

namespace oscwl {
namespace {

constexpr auto kRendezvousTimeout = std::chrono::minutes(5);

int visible_devices() {
    int devices = 0;
    cudaError_t rc = cudaGetDeviceCount(&devices);
    if (rc != cudaSuccess || devices == 0)
        throw WorkloadError("needs a CUDA GPU: " + (rc != cudaSuccess ? std::string(cudaGetErrorString(rc))
                                                                      : std::string("no device visible")));
    return devices;
}

// Exits the whole process: a rank thread that fails leaves its peers blocked
// inside NCCL collectives, so joining them would hang.
[[noreturn]] void fail_process(const std::string& program, const std::exception& e, int code) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
}

void run_threads(const CommonOptions& o, const std::string& program, const RankBody& body, int devices) {
    const int n = o.gpus;
    if (n > devices)
        throw UsageError("--gpus " + std::to_string(n) + " but only " + std::to_string(devices) +
                         " GPU(s) are visible");
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
    std::vector<int> devs(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) devs[static_cast<std::size_t>(i)] = i;
    OSC_NCCL(ncclCommInitAll(comms.data(), n, devs.data()));
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            try {
                OSC_CUDA(cudaSetDevice(i));
                NcclCollectives coll(comms[static_cast<std::size_t>(i)], i, n);
                RankContext ctx{i, n, i, &coll,
                                "single process, " + std::to_string(n) + " GPUs, one thread each (--gpus)"};
                body(ctx);
            } catch (const UsageError& e) {
                fail_process(program, e, 2);
            } catch (const std::exception& e) {
                fail_process(program, e, 1);
            }
        });
    }
    for (auto& t : threads) t.join();
}

// --ranks N in the parent: start the ranks and wait. No CUDA call here, so
// under `overlapscope run` only the ranks load the agent.
void start_local_ranks(const CommonOptions& o, const std::string& program) {
    std::vector<std::string> argv = o.argv;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) argv.at(0) = self.string();
    std::printf("%s: launch: starting %d rank processes on this host (--ranks)\n", program.c_str(), o.ranks);
    std::fflush(stdout);
    std::string failure;
    if (run_local_ranks(o.ranks, argv, failure) != 0) throw WorkloadError(failure);
}

}  // namespace

void run_ranks(const CommonOptions& o, const std::string& program, const RankBody& body) {
    const LaunchEnv env = detect_launch_env(process_env());
    if (o.ranks > 1 && !is_spawned_rank()) {
        if (env.world > 1)
            throw UsageError("--ranks starts its own " + std::to_string(o.ranks) + " ranks; do not combine it with " +
                             env.source + " starting " + std::to_string(env.world));
        start_local_ranks(o, program);
        return;
    }
    if (o.comm == CommBackend::copies && env.world > 1)
        throw UsageError("--comm copies runs a single rank, but " + env.source + " started " +
                         std::to_string(env.world) + " ranks");
    if (o.gpus > 0 && env.world > 1)
        throw UsageError("--gpus drives every GPU from one process; do not combine it with " + env.source +
                         " starting " + std::to_string(env.world) + " ranks");
    const int devices = visible_devices();

    if (o.comm == CommBackend::copies) {
        const int device = env.local_rank % devices;
        OSC_CUDA(cudaSetDevice(device));
        CopyCollectives coll;
        RankContext ctx{0, 1, device, &coll,
                        "single process, 1 GPU, --comm copies (no NCCL: collectives are "
                        "device<->host copies of the same bytes)"};
        body(ctx);
        return;
    }
    if (o.gpus > 0) {
        run_threads(o, program, body, devices);
        return;
    }

    const int device = env.local_rank % devices;
    OSC_CUDA(cudaSetDevice(device));
    // Before NCCL reads its environment (at its first call).
    std::string shared;
    for (const auto& [name, value] : shared_gpu_nccl_env(env, devices, process_env())) {
        ::setenv(name.c_str(), value.c_str(), 1);
        shared += " " + name + "=" + value;
    }
    if (!shared.empty())
        shared = "; " + std::to_string(env.local_world) + " ranks share " + std::to_string(devices) +
                 " GPU(s), so NCCL connects them through its network transport:" + shared;
    ncclUniqueId id;
    RendezvousSpec spec;
    if (env.world > 1) {
        std::string where = o.rendezvous.empty() ? default_rendezvous(process_env()) : o.rendezvous;
        if (where.empty())
            throw UsageError(env.source + " started " + std::to_string(env.world) +
                             " ranks: give --rendezvous file:/path or tcp://host:port "
                             "(or set MASTER_ADDR and MASTER_PORT)");
        spec = parse_rendezvous(where);
        Blob mine;
        if (env.rank == 0) {
            OSC_NCCL(ncclGetUniqueId(&id));
            mine.assign(reinterpret_cast<const std::uint8_t*>(&id),
                        reinterpret_cast<const std::uint8_t*>(&id) + sizeof id);
        }
        Blob got = exchange_blob(spec, env.rank, env.world, mine, sizeof id, kRendezvousTimeout);
        std::memcpy(&id, got.data(), sizeof id);
    } else {
        OSC_NCCL(ncclGetUniqueId(&id));
    }
    ncclComm_t comm = nullptr;
    OSC_NCCL(ncclCommInitRank(&comm, env.world, id, env.rank));
    // Every rank has read the id once init returns.
    if (env.world > 1) finish_rendezvous(spec, env.rank);
    NcclCollectives coll(comm, env.rank, env.world);
    RankContext ctx{env.rank, env.world, device, &coll,
                    "one process per GPU (" +
                        (is_spawned_rank() ? std::string("--ranks") : env.source + " environment") + "), rank " +
                        std::to_string(env.rank) + " of " + std::to_string(env.world) + ", local rank " +
                        std::to_string(env.local_rank) + shared};
    body(ctx);
}

int guarded_main(const std::string& program, const std::function<void()>& main_body) {
    auto line = [&](const std::string& msg) {
        // Parser messages already start with the program name.
        return msg.rfind(program + ":", 0) == 0 ? msg : program + ": " + msg;
    };
    try {
        main_body();
        return 0;
    } catch (const HelpRequested& h) {
        std::cout << h.what();
        return 0;
    } catch (const UsageError& e) {
        std::cerr << line(e.what()) << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << line(e.what()) << "\n";
        return 1;
    }
}

}  // namespace oscwl

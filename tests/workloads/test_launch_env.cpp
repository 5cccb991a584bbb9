// Rank detection from torchrun, Open MPI and SLURM variables.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "reference_workloads/support/launch_env.h"
#include "reference_workloads/support/workload_error.h"

namespace oscwl {
namespace {

EnvLookup fake(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

TEST(LaunchEnv, NoLauncherIsRankZeroOfOne) {
    LaunchEnv e = detect_launch_env(fake({}));
    EXPECT_EQ(e.rank, 0);
    EXPECT_EQ(e.world, 1);
    EXPECT_EQ(e.local_rank, 0);
    EXPECT_EQ(e.source, "none");
}

TEST(LaunchEnv, Torchrun) {
    LaunchEnv e = detect_launch_env(fake({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}}));
    EXPECT_EQ(e.rank, 5);
    EXPECT_EQ(e.world, 8);
    EXPECT_EQ(e.local_rank, 1);
    EXPECT_EQ(e.source, "torchrun");
}

TEST(LaunchEnv, OpenMpi) {
    LaunchEnv e = detect_launch_env(
        fake({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}));
    EXPECT_EQ(e.rank, 3);
    EXPECT_EQ(e.world, 4);
    EXPECT_EQ(e.local_rank, 3);
    EXPECT_EQ(e.source, "openmpi");
}

TEST(LaunchEnv, Slurm) {
    LaunchEnv e = detect_launch_env(fake({{"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"}}));
    EXPECT_EQ(e.rank, 9);
    EXPECT_EQ(e.world, 16);
    EXPECT_EQ(e.local_rank, 1);
    EXPECT_EQ(e.source, "slurm");
}

TEST(LaunchEnv, TorchrunInsideSlurmWins) {
    // An srun allocation of 2 tasks each running torchrun with 4 workers.
    LaunchEnv e = detect_launch_env(
        fake({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"RANK", "6"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "2"}}));
    EXPECT_EQ(e.rank, 6);
    EXPECT_EQ(e.world, 8);
    EXPECT_EQ(e.local_rank, 2);
}

TEST(LaunchEnv, MissingLocalRankDefaultsToZero) {
    EXPECT_EQ(detect_launch_env(fake({{"RANK", "1"}, {"WORLD_SIZE", "2"}})).local_rank, 0);
}

TEST(LaunchEnv, Malformed) {
    EXPECT_THROW(detect_launch_env(fake({{"RANK", "2"}, {"WORLD_SIZE", "2"}})), UsageError);
    EXPECT_THROW(detect_launch_env(fake({{"RANK", "x"}, {"WORLD_SIZE", "2"}})), UsageError);
    EXPECT_THROW(detect_launch_env(fake({{"RANK", "0"}, {"WORLD_SIZE", "0"}})), UsageError);
    EXPECT_THROW(detect_launch_env(fake({{"RANK", "0"}})), UsageError);
    EXPECT_THROW(detect_launch_env(fake({{"SLURM_NTASKS", "2"}})), UsageError);
    EXPECT_THROW(detect_launch_env(fake({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "-1"}})), UsageError);
    try {
        detect_launch_env(fake({{"RANK", "4"}, {"WORLD_SIZE", "4"}}));
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(), "RANK=4 is not below WORLD_SIZE=4");
    }
}

TEST(LaunchEnv, DefaultRendezvousFromMasterAddr) {
    EXPECT_EQ(default_rendezvous(fake({})), "");
    EXPECT_EQ(default_rendezvous(fake({{"MASTER_ADDR", "node7"}})), "");
    EXPECT_EQ(default_rendezvous(fake({{"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29500"}})), "tcp://node7:29501");
    EXPECT_THROW(default_rendezvous(fake({{"MASTER_ADDR", "n"}, {"MASTER_PORT", "65535"}})), UsageError);
}

TEST(LaunchEnv, LocalWorldSizeFromEachLauncher) {
    EXPECT_EQ(detect_launch_env(fake({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "2"}})).local_world, 2);
    EXPECT_EQ(
        detect_launch_env(
            fake({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}))
            .local_world,
        4);
    // SLURM's "2(x3)" form says nothing simple: unknown.
    EXPECT_EQ(
        detect_launch_env(fake({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "6"}, {"SLURM_NTASKS_PER_NODE", "2(x3)"}}))
            .local_world,
        0);
    EXPECT_EQ(detect_launch_env(fake({{"RANK", "0"}, {"WORLD_SIZE", "2"}})).local_world, 0);
    EXPECT_THROW(detect_launch_env(fake({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "0"}})), UsageError);
}

TEST(LaunchEnv, OwnRendezvousComesBeforeMasterAddr) {
    EXPECT_EQ(
        default_rendezvous(fake({{"OSC_RENDEZVOUS", "file:/tmp/x/id"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "9"}})),
        "file:/tmp/x/id");
}

using Vars = std::vector<std::pair<std::string, std::string>>;

LaunchEnv ranks(int rank, int world, int local_world) {
    LaunchEnv e;
    e.rank = rank;
    e.world = world;
    e.local_world = local_world;
    e.source = "torchrun";
    return e;
}

TEST(SharedGpuNcclEnv, EnoughGpusChangeNothing) {
    EXPECT_EQ(shared_gpu_nccl_env(ranks(1, 8, 8), 8, fake({})), Vars{});
    EXPECT_EQ(shared_gpu_nccl_env(ranks(0, 1, 1), 1, fake({})), Vars{});
    // The launcher did not say how many ranks share this host: nothing is assumed.
    EXPECT_EQ(shared_gpu_nccl_env(ranks(1, 2, 0), 1, fake({})), Vars{});
}

TEST(SharedGpuNcclEnv, RanksSharingAGpuLookLikeHostsOfTheirOwn) {
    EXPECT_EQ(shared_gpu_nccl_env(ranks(0, 2, 2), 1, fake({})),
              (Vars{{"NCCL_HOSTID", "osc-rank0"}, {"NCCL_SOCKET_IFNAME", "lo"}}));
    EXPECT_EQ(shared_gpu_nccl_env(ranks(3, 4, 4), 2, fake({})),
              (Vars{{"NCCL_HOSTID", "osc-rank3"}, {"NCCL_SOCKET_IFNAME", "lo"}}));
    // Other hosts take part: their traffic cannot go over loopback.
    EXPECT_EQ(shared_gpu_nccl_env(ranks(5, 8, 4), 2, fake({})), (Vars{{"NCCL_HOSTID", "osc-rank5"}}));
}

TEST(SharedGpuNcclEnv, WhatTheUserSetIsKept) {
    EXPECT_EQ(shared_gpu_nccl_env(ranks(1, 2, 2), 1, fake({{"NCCL_HOSTID", "mine"}})),
              (Vars{{"NCCL_SOCKET_IFNAME", "lo"}}));
    EXPECT_EQ(shared_gpu_nccl_env(ranks(1, 2, 2), 1, fake({{"NCCL_HOSTID", "a"}, {"NCCL_SOCKET_IFNAME", "eth0"}})),
              Vars{});
}

}  // namespace
}  // namespace oscwl

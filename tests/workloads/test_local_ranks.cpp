// --ranks N: the rank processes a workload starts on its host, without a GPU
// (a shell stands in for the workload).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reference_workloads/support/local_ranks.h"
#include "reference_workloads/support/workload_error.h"
#include "tests/support/temp_dir.h"

namespace oscwl {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(LocalRanks, EachRankGetsTheLauncherVariablesAndOneRendezvous) {
    const osc::testsupport::TempDir dir;
    std::string failure;
    const int code =
        run_local_ranks(3,
                        {"/bin/sh", "-c",
                         "echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $OSC_SPAWNED_RANK $OSC_RENDEZVOUS > " +
                             dir.path() + "/$RANK"},
                        failure);
    EXPECT_EQ(code, 0) << failure;
    std::string rendezvous;
    for (int r = 0; r < 3; ++r) {
        std::istringstream line(slurp(dir / std::to_string(r)));
        int rank = -1, world = -1, local = -1, localWorld = -1, spawned = -1;
        std::string rv;
        line >> rank >> world >> local >> localWorld >> spawned >> rv;
        EXPECT_EQ(rank, r);
        EXPECT_EQ(local, r);
        EXPECT_EQ(world, 3);
        EXPECT_EQ(localWorld, 3);
        EXPECT_EQ(spawned, 1);
        EXPECT_EQ(rv.rfind("file:", 0), 0u) << rv;
        if (r == 0) rendezvous = rv;
        EXPECT_EQ(rv, rendezvous) << "all ranks meet at one place";
    }
    // The private rendezvous directory is gone afterwards.
    EXPECT_FALSE(fs::exists(fs::path(rendezvous.substr(5)).parent_path()));
}

TEST(LocalRanks, AFailingRankStopsItsWaitingPeers) {
    std::string failure;
    const auto begin = std::chrono::steady_clock::now();
    // Rank 1 fails at once; rank 0 would wait 60 s (as a peer waits in NCCL).
    const int code =
        run_local_ranks(2, {"/bin/sh", "-c", "if [ $RANK = 1 ]; then exit 3; fi; exec sleep 60"}, failure, 5);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    EXPECT_EQ(code, 3);
    EXPECT_EQ(failure, "rank 1 exited with code 3");
    EXPECT_LT(took, 4.0) << "rank 0 should end at SIGTERM, before the 5 s grace runs out";
}

TEST(LocalRanks, APeerIgnoringSigtermIsKilledAfterTheGrace) {
    std::string failure;
    const auto begin = std::chrono::steady_clock::now();
    const int code = run_local_ranks(
        2, {"/bin/sh", "-c", "if [ $RANK = 1 ]; then exit 4; fi; trap '' TERM; while :; do sleep 0.1; done"}, failure,
        0.5);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    EXPECT_EQ(code, 4);
    EXPECT_LT(took, 10.0);
}

TEST(LocalRanks, RankCountIsChecked) {
    std::string failure;
    EXPECT_THROW(run_local_ranks(0, {"/bin/true"}, failure), UsageError);
    EXPECT_THROW(run_local_ranks(65, {"/bin/true"}, failure), UsageError);
}

}  // namespace
}  // namespace oscwl

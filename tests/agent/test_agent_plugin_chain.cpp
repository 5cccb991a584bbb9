// Issue 41, "beside other NCCL tools": another NCCL profiler plugin chained
// behind ours. The stub plugin (stub_profiler_plugin.cpp, a library of its
// own, loaded as the agent loads the job's plugin) keeps its own events and
// follows the parents NCCL names, so it notices any handle that is not its
// own; the fake NCCL plays on the plugin's tables with rows to the test.
#include "agent/nccl_plugin/plugin_comms.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/fake_nccl_sink.h"
#include "tests/agent/nccl_stress.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace osc::agent {
namespace {

using test::NcclAbi;
using FakeNcclComm = test::SinkNcclComm;

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;
constexpr int kStubMask =
    ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh | ncclProfileCollApi;

// One line of the stub's log: its counts for one communicator.
std::map<std::string, uint64_t> parseStubLine(const std::string& line) {
    std::map<std::string, uint64_t> counts;
    std::istringstream in(line);
    for (std::string field; in >> field;)
        if (const auto eq = field.find('='); eq != std::string::npos)
            counts[field.substr(0, eq)] = std::stoull(field.substr(eq + 1));
    return counts;
}

class PluginChain : public ::testing::TestWithParam<NcclAbi> {
protected:
    void SetUp() override {
        ::setenv("STUB_PROFILER_LOG", log.c_str(), 1);
        ::unsetenv("STUB_PROFILER_FAIL_INIT");
        std::string error;
        auto stub = nccl::openChainedPlugin(OSC_TEST_STUB_PLUGIN, error);
        ASSERT_TRUE(stub) << error;
        nccl::chainPlugin(std::make_shared<const nccl::ChainedPlugin>(std::move(*stub)));
    }
    void TearDown() override {
        nccl::chainPlugin(nullptr);
        ::unsetenv("STUB_PROFILER_LOG");
        ::unsetenv("STUB_PROFILER_FAIL_INIT");
    }
    // The stub's counts for communicator `commHash`, once finalized.
    std::map<std::string, uint64_t> stub(uint64_t commHash) {
        std::ifstream in(log);
        std::map<std::string, uint64_t> found;
        for (std::string line; std::getline(in, line);) {
            auto counts = parseStubLine(line);
            if (counts["comm"] == commHash) found = counts;
        }
        return found;
    }
    using Rows = test::SinkRows;
    test::TempDir dir;
    std::string log = dir / "stub.log";
};

INSTANTIATE_TEST_SUITE_P(Abi, PluginChain, ::testing::Values(NcclAbi::V4, NcclAbi::V5),
                         [](const auto& p) { return p.param == NcclAbi::V4 ? "v4" : "v5"; });

TEST_P(PluginChain, BothPluginsSeeEveryEventWithTheirOwnHandles) {
    const bool v5 = GetParam() == NcclAbi::V5;
    Rows out;
    constexpr uint64_t kComm = 0x41C4A1;
    {
        FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
        EXPECT_EQ(comm.mask(), nccl::kEventMask | kStubMask) << "both plugins' events, neither's lowered";
        // Three launches: an all-reduce of 2 channels, then a send and a
        // receive, each channel reported after the operations were stopped.
        for (int i = 0; i < 3; ++i) {
            const uint64_t t = kT0 + 1000u * static_cast<uint64_t>(i);
            void* g = comm.launch();
            void* ar = comm.coll(g, "AllReduce", static_cast<uint64_t>(i), 256, "ncclFloat32", 2);
            void* send = comm.send(g, 1, 64, "ncclBfloat16", 1);
            void* recv = comm.recv(g, 1, 64, "ncclBfloat16", 1);
            for (void* op : {ar, send, recv}) comm.stop(op);
            comm.stop(g);
            comm.channel(ar, 0, t, t + 100);
            comm.channel(ar, 1, t + 1, t + 110);
            comm.channel(send, 2, t + 2, t + 90);
            comm.channel(recv, 3, t + 3, t + 80);
        }
        ASSERT_EQ(out.rows.size(), 9u);
        // Our rows are what they are without a chain.
        std::map<std::string, int> byFunc;
        for (const auto& r : out.rows) {
            ++byFunc[r.func];
            EXPECT_GE(r.row.gpuStart, static_cast<int64_t>(kT0));
            EXPECT_GT(r.row.gpuEnd, r.row.gpuStart);
        }
        EXPECT_EQ(byFunc["AllReduce"], 3);
        EXPECT_EQ(byFunc["Send"], 3);
        EXPECT_EQ(byFunc["Recv"], 3);
    }
    const auto s = stub(kComm);
    ASSERT_FALSE(s.empty()) << "the stub's finalize never ran";
    EXPECT_EQ(s.at("group"), 3u);
    EXPECT_EQ(s.at("coll"), 3u);
    EXPECT_EQ(s.at("p2p"), 6u);
    EXPECT_EQ(s.at("kernelch"), 12u);
    EXPECT_EQ(s.at("collapi"), v5 ? 3u : 0u);  // ABI 4 has no API events
    EXPECT_EQ(s.at("stops"), 3u + 3u + 6u + 12u + (v5 ? 3u : 0u));
    EXPECT_EQ(s.at("records"), 12u);
    EXPECT_EQ(s.at("bad_handles"), 0u) << "the stub was handed a handle that is not its own";
    EXPECT_EQ(s.at("bad_parents"), 0u) << "a parent was not the stub's own event";
    EXPECT_EQ(s.at("double_stops"), 0u);
    EXPECT_EQ(s.at("unstopped"), 0u);
}

TEST_P(PluginChain, StaleKernelChStopReachesNeitherPlugin) {
    Rows out;
    constexpr uint64_t kComm = 0x41C4A2;
    const IgnoredCalls before = nccl::ignoredCallsOfAll();
    {
        FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
        void* g1 = comm.launch();
        void* a = comm.coll(g1, "AllReduce", 1, 8, "ncclInt8", 1);
        comm.stop(a);
        comm.stop(g1);
        void* old = comm.channelStart(a, 0, kT0);
        comm.channelStop(old, kT0 + 10);
        void* g2 = comm.launch();
        void* b = comm.coll(g2, "AllReduce", 2, 8, "ncclInt8", 1);
        comm.stop(b);
        comm.stop(g2);
        comm.channelStop(old, kT0 + 30);  // NCCL 2.28.9's preempted proxy thread
        comm.channelStart(b, 0, kT0 + 20);
    }
    EXPECT_EQ(nccl::ignoredCallsOfAll().since(before)[IgnoredReason::NcclStaleHandle], 2u);
    EXPECT_EQ(out.rows.size(), 2u);
    const auto s = stub(kComm);
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(s.at("bad_handles"), 0u) << "the stale stop was forwarded";
    EXPECT_EQ(s.at("kernelch"), 2u);
    EXPECT_EQ(s.at("records"), 1u);
    EXPECT_EQ(s.at("bad_parents"), 0u);
}

TEST_P(PluginChain, AFailedChainedInitLeavesOursAsWithout) {
    ::setenv("STUB_PROFILER_FAIL_INIT", "1", 1);
    Rows out;
    constexpr uint64_t kComm = 0x41C4A3;
    {
        FakeNcclComm comm(GetParam(), kComm, 2, 0, out.sink());
        EXPECT_EQ(comm.mask(), nccl::kEventMask);
        void* g = comm.launch();
        void* a = comm.coll(g, "AllGather", 1, 8, "ncclInt8", 1);
        comm.stop(a);
        comm.stop(g);
        comm.channel(a, 0, kT0, kT0 + 5);
    }
    ASSERT_EQ(out.rows.size(), 1u);
    EXPECT_EQ(out.rows[0].row.gpuEnd, static_cast<int64_t>(kT0 + 5));
    EXPECT_TRUE(stub(kComm).empty());
}

// The stress job with the stub behind ours: 4 communicators, main, autograd
// and proxy threads, stale stops, double stops, communicators destroyed.
TEST(PluginChainStress, UnderLoadTheOtherPluginSeesOnlyItsOwnHandles) {
    test::TempDir dir;
    const std::string log = dir / "stub.log";
    ::setenv("STUB_PROFILER_LOG", log.c_str(), 1);
    std::string error;
    auto stubPlugin = nccl::openChainedPlugin(OSC_TEST_STUB_PLUGIN, error);
    ASSERT_TRUE(stubPlugin) << error;
    nccl::chainPlugin(std::make_shared<const nccl::ChainedPlugin>(std::move(*stubPlugin)));
    std::mutex rowsMutex;
    uint64_t rows = 0;
    const CollectiveTracker::Emit sink = [&](PendingCollective&&) {
        std::lock_guard lock(rowsMutex);
        ++rows;
    };
    test::StressOptions options;
    options.seconds = 1;
    options.destroyEveryMs = 100;
    options.staleStopProbability = options.doubleStopProbability = 0.02;
    const test::StressTally tally = test::runNcclStress(
        options, [&](uint64_t commHash) { return std::make_unique<FakeNcclComm>(NcclAbi::V5, commHash, 4, 1, sink); });
    nccl::chainPlugin(nullptr);
    ::unsetenv("STUB_PROFILER_LOG");
    EXPECT_EQ(rows, tally.operations);
    std::ifstream in(log);
    uint64_t comms = 0, colls = 0, p2ps = 0, bad = 0;
    for (std::string line; std::getline(in, line);) {
        auto s = parseStubLine(line);
        ++comms;
        colls += s["coll"];
        p2ps += s["p2p"];
        bad += s["bad_handles"] + s["bad_parents"] + s["double_stops"];
    }
    EXPECT_EQ(comms, static_cast<uint64_t>(options.communicators) + tally.destroyed);
    EXPECT_EQ(colls + p2ps, tally.operations) << "the other plugin saw every operation";
    EXPECT_EQ(bad, 0u) << "the other plugin was handed a handle not its own, or one twice";
}

}  // namespace
}  // namespace osc::agent

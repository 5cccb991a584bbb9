// The writer path end to end inside one process: a fake source feeds the
// bounded pool, the writer thread decodes into a capture file, and the file
// is read back with the analyzer's loader. Also the capture lifecycle.
#include "agent/core/agent.h"
#include "agent/core/capture_session.h"
#include "agent/fake/fake_source.h"
#include "analyzer/load/load_capture.h"
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace osc::agent {
namespace {

ProcessIdentity testIdentity() {
    ProcessIdentity who;
    who.host = "testhost";
    who.pid = ::getpid();
    who.rank = 1;
    who.localRank = 1;
    who.worldSize = 2;
    who.commandLine = "train.py --fast";
    who.executable = "train.py";
    return who;
}

std::map<std::string, size_t> kernelCountsByShortName(const Capture& cap) {
    std::map<std::string, size_t> counts;
    for (const auto& p : cap.processes)
        for (const auto& d : p.devices)
            for (size_t i = 0; i < d.kernels.size(); ++i) ++counts[std::string(cap.strings.at(d.kernels.shortName[i]))];
    return counts;
}

TEST(CaptureSession, EveryGeneratedRecordReachesTheFile) {
    test::TempDir dir;
    FakeSourceOptions opt;
    opt.recordsPerSecond = 0;
    opt.waitForBuffers = true;
    opt.maxRecords = 4000;  // 1000 steps: 1 range + 3 kernels each
    FakeActivitySource source(opt);
    BufferPool pool(1u << 20, 64u << 10);
    SessionConfig cfg;
    cfg.path = dir / "cap.sqlite";
    cfg.who = testIdentity();
    cfg.commitIntervalMs = 50;
    CaptureSession session(cfg, source, pool);
    std::string error;
    ASSERT_TRUE(session.start(error)) << error;
    ASSERT_TRUE(test::waitUntil([&] { return source.finished(); }));
    session.stop(CaptureEnd::Stopped);
    EXPECT_EQ(session.droppedRecords(), 0u);

    const Capture cap = loadCapture(cfg.path);
    ASSERT_EQ(cap.processes.size(), 1u);
    const Process& p = cap.processes[0];
    EXPECT_EQ(p.pid, ::getpid());
    EXPECT_EQ(p.host, "testhost");
    EXPECT_EQ(p.rank, 1);
    EXPECT_EQ(p.worldSize, 2);
    EXPECT_EQ(cap.kernelCount(), 3000u);
    const auto counts = kernelCountsByShortName(cap);
    EXPECT_EQ(counts.at("gemm_bf16_tn_"), 1000u);
    EXPECT_EQ(counts.at("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), 1000u);
    EXPECT_EQ(counts.at("vectorized_elementwise_kernel"), 500u);
    EXPECT_EQ(counts.at("layer_norm_fwd"), 500u);
    ASSERT_EQ(p.devices.size(), 1u);
    const auto& k = p.devices[0].kernels;
    bool sawDemangled = false;
    for (size_t i = 0; i < k.size(); ++i) {
        EXPECT_LE(k.start[i], k.end[i]);
        EXPECT_GE(k.start[i], 0);
        if (cap.strings.at(k.name[i]) == "gemm_bf16_tn_(float*, float*, float*, int)") sawDemangled = true;
    }
    EXPECT_TRUE(sawDemangled);
    EXPECT_EQ(p.ranges.size(), 1000u);
    EXPECT_EQ(p.meta.at("dropped_records"), "0");
    EXPECT_EQ(p.meta.at("activity_source"), "fake");
    EXPECT_EQ(p.meta.at("command_line"), "train.py --fast");
    EXPECT_EQ(p.meta.at("pid"), std::to_string(::getpid()));
    EXPECT_TRUE(p.meta.count("capture_start_utc_ns"));
    EXPECT_TRUE(p.meta.count("capture_stop_source_ns"));
    EXPECT_LE(std::stoll(p.meta.at("capture_start_utc_ns")), std::stoll(p.meta.at("capture_stop_utc_ns")));
}

TEST(CaptureSession, TinyBufferBoundDropsAndCountsInsteadOfBlocking) {
    test::TempDir dir;
    FakeSourceOptions opt;
    opt.recordsPerSecond = 0;     // as fast as possible...
    opt.waitForBuffers = false;   // ...and never wait: the app thread must not block
    opt.maxRecords = 200000;
    FakeActivitySource source(opt);
    BufferPool pool(4096, 4096);  // a single small buffer
    SessionConfig cfg;
    cfg.path = dir / "tiny.sqlite";
    cfg.who = testIdentity();
    CaptureSession session(cfg, source, pool);
    std::string error;
    ASSERT_TRUE(session.start(error)) << error;
    ASSERT_TRUE(test::waitUntil([&] { return source.finished(); }));
    session.stop(CaptureEnd::Stopped);

    const uint64_t dropped = session.droppedRecords();
    EXPECT_GT(dropped, 0u);
    EXPECT_GT(pool.refusedRequests(), 0u);
    const Capture cap = loadCapture(cfg.path);
    const Process& p = cap.processes.at(0);
    const uint64_t written = cap.kernelCount() + p.ranges.size();
    EXPECT_EQ(written + dropped, source.producedRecords());  // nothing lost uncounted
    EXPECT_EQ(p.meta.at("dropped_records"), std::to_string(dropped));
}

TEST(CaptureSession, RefusesToOverwriteAndReportsTheFile) {
    test::TempDir dir;
    FakeActivitySource source(FakeSourceOptions{});
    BufferPool pool(1u << 20, 64u << 10);
    SessionConfig cfg;
    cfg.who = testIdentity();
    cfg.path = dir / "not-a-dir" + "/x.sqlite";
    std::ofstream(dir / "not-a-dir") << "file";
    EXPECT_THROW(CaptureSession(cfg, source, pool), std::exception);
}

class AgentLifecycle : public ::testing::Test {
protected:
    std::unique_ptr<Agent> makeAgent(bool dormant = true, double delayS = 0, double durationS = 0) {
        AgentSettings s;
        s.outputDir = dir.path();
        s.dormant = dormant;
        s.delayS = delayS;
        s.durationS = durationS;
        s.control = false;
        s.commitIntervalMs = 50;
        FakeSourceOptions opt;
        opt.recordsPerSecond = 20000;
        auto agent = std::make_unique<Agent>(s, testIdentity(), std::make_unique<FakeActivitySource>(opt));
        agent->boot();
        return agent;
    }
    test::TempDir dir;
};

TEST_F(AgentLifecycle, StartStopRestartWritesOneFilePerCapture) {
    auto agent = makeAgent();
    EXPECT_EQ(agent->state(), AgentState::Dormant);
    EXPECT_TRUE(test::filesIn(dir.path()).empty());
    std::string error;
    EXPECT_FALSE(agent->stopCapture(CaptureEnd::Stopped, error));
    ASSERT_TRUE(agent->startCapture(std::nullopt, std::nullopt, error)) << error;
    EXPECT_EQ(agent->state(), AgentState::Capturing);
    EXPECT_FALSE(agent->startCapture(std::nullopt, std::nullopt, error));  // one at a time
    EXPECT_NE(error.find("already running"), std::string::npos);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    ASSERT_TRUE(agent->stopCapture(CaptureEnd::Stopped, error)) << error;
    EXPECT_EQ(agent->state(), AgentState::Stopped);
    const std::string first = agent->status().output;
    ASSERT_TRUE(agent->startCapture(std::nullopt, std::nullopt, error)) << error;
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    ASSERT_TRUE(agent->stopCapture(CaptureEnd::Stopped, error));
    const AgentStatus st = agent->status();
    EXPECT_EQ(st.captures, 2u);
    EXPECT_NE(st.output, first);
    EXPECT_NE(st.output.find("-rank1-2.sqlite"), std::string::npos) << st.output;
    const auto files = test::filesIn(dir.path());
    ASSERT_EQ(files.size(), 2u);
    for (const auto& f : files) {
        const Capture cap = loadCapture(f);
        EXPECT_GT(cap.kernelCount(), 0u) << f;
    }
}

TEST_F(AgentLifecycle, DurationExpiryStopsTheCapture) {
    auto agent = makeAgent();
    std::string error;
    ASSERT_TRUE(agent->startCapture(0.3, std::nullopt, error)) << error;
    EXPECT_TRUE(test::waitUntil([&] { return agent->state() == AgentState::Stopped; }, 5));
    const auto files = test::filesIn(dir.path());
    ASSERT_EQ(files.size(), 1u);
    EXPECT_GT(loadCapture(files[0]).kernelCount(), 0u);
}

TEST_F(AgentLifecycle, NotDormantStartsAtBootAndShutdownCloses) {
    auto agent = makeAgent(/*dormant=*/false);
    EXPECT_EQ(agent->state(), AgentState::Capturing);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    agent->shutdown(CaptureEnd::ProcessExit);
    const auto files = test::filesIn(dir.path());
    ASSERT_EQ(files.size(), 1u);
    const Capture cap = loadCapture(files[0]);
    EXPECT_GT(cap.kernelCount(), 0u);
    std::string error;
    EXPECT_FALSE(agent->startCapture(std::nullopt, std::nullopt, error));  // exiting
}

TEST_F(AgentLifecycle, DelayedStartThenScheduledDuration) {
    auto agent = makeAgent(/*dormant=*/false, /*delayS=*/0.3, /*durationS=*/0.3);
    EXPECT_EQ(agent->state(), AgentState::Dormant);  // waiting for the delay
    EXPECT_TRUE(test::filesIn(dir.path()).empty());
    EXPECT_TRUE(test::waitUntil([&] { return agent->state() == AgentState::Capturing; }, 5));
    EXPECT_TRUE(test::waitUntil([&] { return agent->state() == AgentState::Stopped; }, 5));
    const auto files = test::filesIn(dir.path());
    ASSERT_EQ(files.size(), 1u);
    const auto meta = loadCapture(files[0]).processes.at(0).meta;
    const double seconds =
        (std::stod(meta.at("capture_stop_utc_ns")) - std::stod(meta.at("capture_start_utc_ns"))) / 1e9;
    EXPECT_GT(seconds, 0.25);
    EXPECT_LT(seconds, 2.0);
}

TEST_F(AgentLifecycle, UnwritableOutputFailsThatCaptureOnly) {
    auto agent = makeAgent();
    std::ofstream(dir / "file") << "x";
    std::string error;
    EXPECT_FALSE(agent->startCapture(std::nullopt, dir / "file" + "/sub", error));
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(agent->state(), AgentState::Dormant);
    EXPECT_TRUE(agent->startCapture(std::nullopt, std::nullopt, error)) << error;
}

TEST_F(AgentLifecycle, SourceThatCannotStartDisablesCaptureAndLeavesNoFile) {
    ::setenv("OVERLAPSCOPE_FAKE_FAIL", "no driver", 1);
    auto agent = makeAgent();
    std::string error;
    EXPECT_FALSE(agent->startCapture(std::nullopt, std::nullopt, error));
    ::unsetenv("OVERLAPSCOPE_FAKE_FAIL");
    EXPECT_NE(error.find("no driver"), std::string::npos);
    EXPECT_EQ(agent->state(), AgentState::Disabled);
    EXPECT_TRUE(test::filesIn(dir.path()).empty());
    EXPECT_FALSE(agent->startCapture(std::nullopt, std::nullopt, error));
}

}  // namespace
}  // namespace osc::agent

// The writer path end to end inside one process: a fake source feeds the
// bounded pool, the writer thread decodes into a capture file, and the file
// is read back with the analyzer's loader. Also the capture lifecycle: how
// much a killed process can lose, the bounded drain at exit, and write
// errors that end one capture and nothing else.
#include "agent/core/agent.h"
#include "agent/core/capture_session.h"
#include "agent/fake/fake_source.h"
#include "analyzer/capture/sqlite_util.h"
#include "analyzer/load/load_capture.h"
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>

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

SessionConfig sessionConfig(const std::string& path) {
    SessionConfig cfg;
    cfg.path = path;
    cfg.who = testIdentity();
    return cfg;
}

bool hasKernelIndex(const std::string& path) {
    sql::Database db(path, SQLITE_OPEN_READONLY);
    sql::Statement q(db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'kernel_device_start'");
    return q.step();
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
    SessionConfig cfg = sessionConfig(dir / "cap.sqlite");
    cfg.commitIntervalMs = 50;
    CaptureSession session(cfg, source, pool);
    std::string error;
    ASSERT_EQ(session.start(error), CaptureSession::Start::Started) << error;
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
    EXPECT_TRUE(hasKernelIndex(cfg.path)) << "a stopped capture is indexed";
}

// The plugin's collectives still running when the capture closes are written
// with no GPU end: how a capture of a hung job says where each rank waits.
TEST(CaptureSession, CollectivesStillRunningAreWrittenWithoutAGpuEnd) {
    test::TempDir dir;
    FakeSourceOptions opt;
    opt.recordsPerSecond = 0;
    opt.waitForBuffers = true;
    opt.maxRecords = 40;
    FakeActivitySource source(opt);
    BufferPool pool(1u << 20, 64u << 10);
    SessionConfig cfg = sessionConfig(dir / "hung.sqlite");
    int64_t now = 0;  // entered after the capture began
    int asked = 0;
    cfg.openCollectives = [&] {
        ++asked;
        PendingCollective c;
        c.func = "AllReduce";
        c.datatype = "ncclFloat32";
        c.row.commHash = 0x77;
        c.row.rank = 1;
        c.row.nranks = 2;
        c.row.seqNumber = 17;
        c.row.bytes = 4096;
        c.row.enqueue = now;
        return std::vector<PendingCollective>{c};
    };
    CaptureSession session(cfg, source, pool);
    std::string error;
    ASSERT_EQ(session.start(error), CaptureSession::Start::Started) << error;
    now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
    ASSERT_TRUE(test::waitUntil([&] { return source.finished(); }));
    session.stop(CaptureEnd::Stopped);
    EXPECT_EQ(asked, 1);
    const Capture cap = loadCapture(cfg.path);
    const CollectiveTable& t = cap.processes.at(0).collectives;
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t.seqNumber[0], 17u);
    EXPECT_EQ(t.gpuEnd[0], -1);
    EXPECT_GE(t.enqueue[0], 0);
}

TEST(CaptureSession, TinyBufferBoundDropsAndCountsInsteadOfBlocking) {
    test::TempDir dir;
    FakeSourceOptions opt;
    opt.recordsPerSecond = 0;    // as fast as possible...
    opt.waitForBuffers = false;  // ...and never wait: the app thread must not block
    opt.maxRecords = 200000;
    FakeActivitySource source(opt);
    BufferPool pool(4096, 4096);  // a single small buffer
    SessionConfig cfg = sessionConfig(dir / "tiny.sqlite");
    CaptureSession session(cfg, source, pool);
    std::string error;
    ASSERT_EQ(session.start(error), CaptureSession::Start::Started) << error;
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
    const SessionConfig cfg = sessionConfig(dir / "not-a-dir" + "/x.sqlite");
    std::ofstream(dir / "not-a-dir") << "file";
    EXPECT_THROW(CaptureSession(cfg, source, pool), std::exception);
}

// The loss bound, checked at every moment rather than at one kill: a
// reader polls the file as the writer commits, and at each poll the
// activity newer than the newest committed record is what a SIGKILL then
// would lose. The worst poll must stay within the commit interval.
TEST(CaptureSession, AKillAtAnyMomentLosesAtMostTheCommitInterval) {
    test::TempDir dir;
    FakeSourceOptions opt;
    opt.recordsPerSecond = 20000;
    FakeActivitySource source(opt);
    BufferPool pool(8u << 20, 1u << 20);
    SessionConfig cfg = sessionConfig(dir / "kill.sqlite");
    cfg.commitIntervalMs = 400;
    CaptureSession session(cfg, source, pool);
    std::string error;
    ASSERT_EQ(session.start(error), CaptureSession::Start::Started) << error;
    const int64_t startedNs = realtimeNs();  // no activity before this to lose

    sql::Database db(cfg.path, SQLITE_OPEN_READONLY);
    int64_t originNs = 0;  // the fake's clock at time 0 of the file
    {
        sql::Statement q(db, "SELECT value FROM OVERLAPSCOPE_META WHERE name = 'capture_start_source_ns'");
        ASSERT_TRUE(q.step());
        originNs = std::stoll(std::string(q.text(0)));
    }
    // The newest rows (by insertion) hold the newest activity.
    sql::Statement newest(db,
                          "SELECT max(end) FROM (SELECT end FROM OVERLAPSCOPE_KERNEL ORDER BY rowid DESC LIMIT 16)");
    int64_t worstNs = 0;
    size_t polls = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < until) {
        const int64_t durableNs = newest.step() && !newest.isNull(0) ? originNs + newest.int64(0) : startedNs;
        newest.reset();  // ends the read: the writer's checkpoints need not wait for it
        worstNs = std::max(worstNs, realtimeNs() - durableNs);
        ++polls;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    session.stop(CaptureEnd::Stopped);
    EXPECT_GT(polls, 300u);
    EXPECT_GT(worstNs, 100'000'000) << "the polls never saw a commit coming";
    EXPECT_LE(worstNs, int64_t{cfg.commitIntervalMs} * 1'000'000)
        << "a kill at the worst moment would have lost " << worstNs / 1e6 << " ms";
}

// The application waits for the agent at exit: records still waiting when
// the drain bound runs out are counted as dropped instead of written.
TEST(CaptureSession, ExitDrainIsBoundedAndCountsWhatItDrops) {
    test::TempDir dir;
    FakeSourceOptions opt;
    opt.recordsPerSecond = 0;   // far faster than SQLite...
    opt.waitForBuffers = true;  // ...and nothing dropped before the exit
    opt.maxRecords = 800000;
    FakeActivitySource source(opt);
    BufferPool pool(96u << 20, 4u << 20);  // room for all of them: a long queue at exit
    SessionConfig cfg = sessionConfig(dir / "exit.sqlite");
    cfg.exitDrainMs = 100;
    CaptureSession session(cfg, source, pool);
    std::string error;
    ASSERT_EQ(session.start(error), CaptureSession::Start::Started) << error;
    ASSERT_TRUE(test::waitUntil([&] { return source.finished(); }));
    const auto t0 = std::chrono::steady_clock::now();
    session.stop(CaptureEnd::ProcessExit);
    const double stopS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    EXPECT_GT(session.droppedAtExit(), 0u) << "the whole queue was written: the drain was not bounded";
    EXPECT_EQ(session.droppedRecords(), session.droppedAtExit());
    const Capture cap = loadCapture(cfg.path);
    const Process& p = cap.processes.at(0);
    EXPECT_EQ(cap.kernelCount() + p.ranges.size() + session.droppedRecords(), source.producedRecords())
        << "every record is written or counted";
    EXPECT_EQ(p.meta.at("dropped_records"), std::to_string(session.droppedRecords()));
    EXPECT_EQ(p.meta.at("dropped_at_exit"), std::to_string(session.droppedAtExit()));
    EXPECT_EQ(p.meta.at("end_reason"), "process_exit");
    EXPECT_FALSE(hasKernelIndex(cfg.path)) << "the exiting process waited for indexes";
    // 100 ms of writing, counting the rest, then the close.
    EXPECT_LT(stopS, 2.0);
    std::printf("exit drain: stop took %.3f s, %llu records written, %llu dropped at exit\n", stopS,
                static_cast<unsigned long long>(cap.kernelCount() + p.ranges.size()),
                static_cast<unsigned long long>(session.droppedAtExit()));
}

// A source whose stop (or flush) does not return until the test lets it, as
// CUPTI's disable / flush / unsubscribe did not on the H200 mesh. It lends
// one buffer at start and hands it back only when its stop finally ends.
class StuckSource final : public ActivitySource {
public:
    explicit StuckSource(bool stuckInFlush = false) : stuckInFlush_(stuckInFlush) {}
    const char* name() const override { return "stuck"; }
    bool start(BufferSink& sink, std::string&) override {
        sink_ = &sink;
        size_t size = 0;
        held_ = sink.requestBuffer(&size);
        return true;
    }
    void stop() override {
        if (!stuckInFlush_) waitForRelease();
        if (held_) sink_->bufferCompleted(held_, 0);
        held_ = nullptr;
        stopped_ = true;
    }
    void flush() override {
        if (stuckInFlush_) {
            inFlush_ = true;
            waitForRelease();
        }
    }
    void decode(const uint8_t*, size_t, const DecodeContext&, RowSink&) override {}
    int64_t timestampNs() const override { return realtimeNs(); }
    uint64_t takeDroppedRecords() override { return 0; }

    void release() {
        {
            std::lock_guard lock(mutex_);
            released_ = true;
        }
        cv_.notify_all();
    }
    std::atomic<bool> stopped_{false}, inFlush_{false};

private:
    void waitForRelease() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return released_; });
    }
    const bool stuckInFlush_;
    BufferSink* sink_ = nullptr;
    uint8_t* held_ = nullptr;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool released_ = false;
};

TEST(CaptureSession, ASourceThatNeverStopsIsGivenUpOnAtExit) {
    test::TempDir dir;
    StuckSource source;
    BufferPool pool(1u << 20, 64u << 10);
    SessionConfig cfg = sessionConfig(dir / "stuck.sqlite");
    cfg.exitDrainMs = 100;
    cfg.sourceStopMs = 300;
    auto session = std::make_unique<CaptureSession>(cfg, source, pool);
    std::string error;
    ASSERT_EQ(session->start(error), CaptureSession::Start::Started) << error;
    EXPECT_EQ(pool.buffersInUse(), 1u);
    const auto t0 = std::chrono::steady_clock::now();
    session->stop(CaptureEnd::Signal);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(took, 2.0);
    EXPECT_GE(took, 0.29);
    EXPECT_TRUE(session->sourceGaveUp());
    EXPECT_TRUE(session->abandoned());
    EXPECT_FALSE(source.stopped_.load());
    // The file was closed without the source.
    const Capture cap = loadCapture(cfg.path);
    EXPECT_EQ(cap.processes.at(0).meta.at("end_reason"), "signal");
    EXPECT_EQ(cap.processes.at(0).meta.at("ignored_source_stop_gave_up"), "1");
    // The stuck stop ends at last and hands its buffer back: to the pool, unread.
    source.release();
    ASSERT_TRUE(test::waitUntil([&] { return source.stopped_.load(); }));
    ASSERT_TRUE(test::waitUntil([&] { return pool.buffersInUse() == 0; }));
    EXPECT_EQ(pool.ignored()[IgnoredReason::BufferAfterStop], 1u);
    session.reset();  // only now: nothing of it is stuck any more
}

TEST(CaptureSession, AWriterStuckInTheSourceIsGivenUpOnAtExit) {
    test::TempDir dir;
    StuckSource source(/*stuckInFlush=*/true);
    BufferPool pool(1u << 20, 64u << 10);
    SessionConfig cfg = sessionConfig(dir / "stuck-writer.sqlite");
    cfg.commitIntervalMs = 20;  // the writer flushes every 10 ms
    cfg.exitDrainMs = 100;
    cfg.sourceStopMs = 300;
    auto session = std::make_unique<CaptureSession>(cfg, source, pool);
    std::string error;
    ASSERT_EQ(session->start(error), CaptureSession::Start::Started) << error;
    ASSERT_TRUE(test::waitUntil([&] { return source.inFlush_.load(); }));
    const auto t0 = std::chrono::steady_clock::now();
    session->stop(CaptureEnd::ProcessExit);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(took, 3.0);
    EXPECT_TRUE(session->abandoned());
    // As a killed process's: what was committed (the start metadata) reads.
    const Capture cap = loadCapture(cfg.path);
    EXPECT_EQ(cap.processes.at(0).meta.count("end_reason"), 0u);
    EXPECT_EQ(cap.processes.at(0).meta.at("host"), "testhost");
    source.release();
    ASSERT_TRUE(test::waitUntil([&] { return source.stopped_.load(); }));
    session.reset();
}

class AgentLifecycle : public ::testing::Test {
protected:
    std::unique_ptr<Agent> makeAgent(bool dormant = true, double delayS = 0, double durationS = 0,
                                     FakeSourceOptions opt = {}) {
        AgentSettings s;
        s.outputDir = dir.path();
        s.dormant = dormant;
        s.delayS = delayS;
        s.durationS = durationS;
        s.control = false;
        s.commitIntervalMs = 50;
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
    const control::AgentStatus st = agent->status();
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

// 1e10 s is past what the clock's nanoseconds hold: it must mean "a very
// long time", not wrap around to "already over".
TEST_F(AgentLifecycle, AHugeDurationDoesNotEndTheCaptureAtOnce) {
    auto agent = makeAgent();
    std::string error;
    ASSERT_TRUE(agent->startCapture(1e10, std::nullopt, error)) << error;
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_EQ(agent->state(), AgentState::Capturing);
    ASSERT_TRUE(agent->stopCapture(CaptureEnd::Stopped, error)) << error;
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

namespace osc::agent {
namespace {

// A capture whose first commit cannot be written (disk full) fails alone:
// the agent is not disabled, and the next capture elsewhere works.
TEST_F(AgentLifecycle, AWriteErrorAtTheFirstCommitFailsThatCaptureOnly) {
    std::filesystem::create_directories(dir / "other");
    FakeSourceOptions opt;
    opt.metadataPaddingBytes = 8u << 20;  // the first commit needs 8 MB more
    auto agent = makeAgent(/*dormant=*/true, 0, 0, opt);
    test::FileSizeLimit limit(4u << 20);  // the empty capture fits, the first commit does not
    std::string error;
    EXPECT_FALSE(agent->startCapture(std::nullopt, std::nullopt, error));
    EXPECT_FALSE(error.empty());
    EXPECT_NE(agent->state(), AgentState::Disabled) << error;
    EXPECT_TRUE(test::filesIn(dir.path()).empty()) << "the failed capture's file is removed";
    limit.lift();  // space again, or another disk
    ASSERT_TRUE(agent->startCapture(std::nullopt, dir / "other", error)) << error;
    EXPECT_EQ(agent->state(), AgentState::Capturing);
    ASSERT_TRUE(agent->stopCapture(CaptureEnd::Stopped, error)) << error;
    ASSERT_EQ(test::filesIn(dir / "other").size(), 1u);
    EXPECT_EQ(loadCapture(test::filesIn(dir / "other")[0]).processes.at(0).meta.at("end_reason"), "stopped");
}

// The disk fills up during a capture: that capture ends by itself (its file
// keeps what was committed), and a later one works.
TEST_F(AgentLifecycle, AWriteErrorDuringACaptureEndsItAndTheNextOneWorks) {
    FakeSourceOptions opt;
    opt.recordsPerSecond = 500000;  // several MB a second into the file
    auto agent = makeAgent(/*dormant=*/true, 0, 0, opt);
    std::filesystem::create_directories(dir / "other");
    std::string error;
    {
        test::FileSizeLimit limit(6u << 20);
        ASSERT_TRUE(agent->startCapture(std::nullopt, std::nullopt, error)) << error;
        EXPECT_TRUE(test::waitUntil([&] { return agent->state() == AgentState::Stopped; }, 10))
            << "the broken capture kept running";
    }
    const auto broken = test::filesIn(dir.path());
    ASSERT_EQ(broken.size(), 1u);
    const Capture kept = loadCapture(broken[0]);
    EXPECT_GT(kept.kernelCount(), 0u) << "what was committed before the error stays readable";
    // Not "stopped": the file says it did not finish (issue 49 item 5).
    EXPECT_EQ(kept.processes.at(0).meta.count("end_reason"), 0u);
    ASSERT_TRUE(agent->startCapture(std::nullopt, dir / "other", error)) << error;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(agent->stopCapture(CaptureEnd::Stopped, error)) << error;
    ASSERT_EQ(test::filesIn(dir / "other").size(), 1u);
    EXPECT_GT(loadCapture(test::filesIn(dir / "other")[0]).kernelCount(), 0u);
}

}  // namespace
}  // namespace osc::agent

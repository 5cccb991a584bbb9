// The stop grace (capture_session.h). A capture stopped by request waits for
// the GPU records of the work launched before the stop, leaves out those of
// work launched after it, and never waits past its bound; a capture ended by
// an exit or a signal does not wait. The fake source plays a GPU that runs
// each kernel a fixed time after its launch, so kernels are in flight when
// the capture stops, as on a real GPU (docs/measurements.md, "Attach twice").
#include "agent/core/awaited_launches.h"
#include "agent/core/capture_session.h"
#include "agent/core/stop_window_sink.h"
#include "agent/fake/fake_source.h"
#include "analyzer/load/load_capture.h"
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace osc::agent {
namespace {

// ---- which calls wait for a GPU record ----

TEST(ApiCallRole, LaunchesCopiesGraphsAndStreamCaptureByTheirCuptiNames) {
    const std::map<std::string, ApiCallRole> expected = {
        {"cudaLaunchKernel_v7000", ApiCallRole::KernelLaunch},
        {"cudaLaunchKernel_ptsz_v7000", ApiCallRole::KernelLaunch},
        {"cudaLaunchKernelExC_v11060", ApiCallRole::KernelLaunch},
        {"cuLaunchKernel", ApiCallRole::KernelLaunch},
        {"cuLaunchKernelEx", ApiCallRole::KernelLaunch},
        {"cuLaunchKernelEx_ptsz", ApiCallRole::KernelLaunch},
        {"cudaLaunchCooperativeKernel_v9000", ApiCallRole::KernelLaunch},
        {"cudaMemcpyAsync_v3020", ApiCallRole::AsyncCopyOrMemset},
        {"cudaMemcpyAsync_ptsz_v7000", ApiCallRole::AsyncCopyOrMemset},
        {"cudaMemcpy2DAsync_v3020", ApiCallRole::AsyncCopyOrMemset},
        {"cudaMemsetAsync_v3020", ApiCallRole::AsyncCopyOrMemset},
        {"cuMemcpyHtoDAsync_v2", ApiCallRole::AsyncCopyOrMemset},
        {"cuMemcpyHtoDAsync_v2_ptsz", ApiCallRole::AsyncCopyOrMemset},
        {"cuMemsetD32Async", ApiCallRole::AsyncCopyOrMemset},
        {"cudaGraphLaunch_v10000", ApiCallRole::GraphLaunch},
        {"cuGraphLaunch_ptsz", ApiCallRole::GraphLaunch},
        {"cudaStreamBeginCapture_v10000", ApiCallRole::BeginStreamCapture},
        {"cuStreamBeginCapture_v2", ApiCallRole::BeginStreamCapture},
        {"cudaStreamEndCapture_v10000", ApiCallRole::EndStreamCapture},
        // Finished when the call returns, or no GPU record at all.
        {"cudaMemcpy_v3020", ApiCallRole::Other},
        {"cuMemcpyHtoD_v2", ApiCallRole::Other},
        {"cudaMemPrefetchAsync_v8000", ApiCallRole::Other},
        {"cudaMallocAsync_v11020", ApiCallRole::Other},
        {"cuMemAllocAsync", ApiCallRole::Other},
        {"cudaLaunchHostFunc_v10000", ApiCallRole::Other},
        {"cudaStreamSynchronize_v3020", ApiCallRole::Other},
        {"cudaLaunchKernelX", ApiCallRole::Other},
        {"cudaLaunchKernel_vX", ApiCallRole::Other},
        {"", ApiCallRole::Other},
    };
    for (const auto& [name, role] : expected) EXPECT_EQ(apiCallRole(name), role) << name;
}

ApiCallRow call(const char* name, uint32_t correlationId, uint64_t thread = 7, int32_t returnValue = 0) {
    ApiCallRow a;
    a.name = name;
    a.correlationId = correlationId;
    a.globalTid = thread;
    a.returnValue = returnValue;
    return a;
}

TEST(AwaitedLaunches, ALaunchWaitsForItsGpuRecordWhicheverComesFirst) {
    AwaitedLaunches a;
    a.apiCall(call("cudaLaunchKernel_v7000", 10));
    a.apiCall(call("cudaStreamSynchronize_v3020", 11));  // no GPU record expected
    a.apiCall(call("cudaMemcpyAsync_v3020", 12));
    EXPECT_EQ(a.count(), 2u);
    a.gpuRecord(12);
    EXPECT_EQ(a.count(), 1u);
    a.gpuRecord(12);  // a second record of one call (a graph's nodes)
    EXPECT_EQ(a.count(), 1u);
    a.gpuRecord(14);  // its launch record comes later (another buffer)
    a.apiCall(call("cuLaunchKernelEx", 14));
    EXPECT_EQ(a.count(), 1u);
    a.apiCall(call("cudaLaunchKernel_v7000", 15, 7, /*returnValue=*/1));  // failed: nothing runs
    EXPECT_EQ(a.count(), 1u);
    a.gpuRecord(10);
    EXPECT_EQ(a.count(), 0u);
}

TEST(AwaitedLaunches, LaunchesIntoAStreamCaptureWaitForNothingButTheGraphLaunchDoes) {
    AwaitedLaunches a;
    a.apiCall(call("cudaStreamBeginCapture_v10000", 1, /*thread=*/5));
    a.apiCall(call("cudaLaunchKernel_v7000", 2, 5));  // becomes a graph node
    a.apiCall(call("cudaLaunchKernel_v7000", 3, 6));  // another thread: runs
    a.apiCall(call("cudaStreamEndCapture_v10000", 4, 5));
    a.apiCall(call("cudaGraphLaunch_v10000", 5, 5));
    a.apiCall(call("cudaLaunchKernel_v7000", 6, 5));  // after the capture: runs
    EXPECT_EQ(a.count(), 3u);
    for (uint32_t id : {3u, 5u, 6u}) a.gpuRecord(id);
    EXPECT_EQ(a.count(), 0u);
}

TEST(AwaitedLaunches, LaunchesOlderThanTheWindowAreForgotten) {
    AwaitedLaunches a(8);
    a.apiCall(call("cudaLaunchKernel_v7000", 1));
    a.apiCall(call("cudaLaunchKernel_v7000", 2));
    EXPECT_EQ(a.count(), 2u);
    a.gpuRecord(9);  // 1 is now 8 ids back: out of the window
    EXPECT_EQ(a.count(), 1u);
    a.gpuRecord(1);  // too old to matter
    a.gpuRecord(2);
    EXPECT_EQ(a.count(), 0u);
    a.apiCall(call("cudaLaunchKernel_v7000", 1000));
    a.apiCall(call("cudaLaunchKernel_v7000", 5));  // far older than the newest: not waited for
    EXPECT_EQ(a.count(), 1u);
}

// Against a plain model: launches recorded (kernel or copy calls that
// succeeded) minus correlation ids that had a GPU record, in random order.
TEST(AwaitedLaunches, CountMatchesAModelOfRandomInterleavings) {
    std::mt19937 rng(1234);
    const char* names[] = {"cudaLaunchKernel_v7000", "cuLaunchKernelEx", "cudaMemsetAsync_v3020",
                           "cudaEventRecord_v3020", "cudaMemcpy_v3020"};
    for (int round = 0; round < 50; ++round) {
        AwaitedLaunches a;
        std::set<uint32_t> launched, ran;
        for (int i = 0; i < 400; ++i) {
            const uint32_t id = 1 + static_cast<uint32_t>(rng() % 200);
            if (rng() % 2) {
                const size_t k = rng() % 5;
                const int32_t rv = rng() % 10 == 0 ? 2 : 0;
                a.apiCall(call(names[k], id, 7, rv));
                if (rv == 0 && k < 3) launched.insert(id);  // the first three launch work
            } else {
                a.gpuRecord(id);
                ran.insert(id);
            }
            size_t expected = 0;
            for (uint32_t l : launched) expected += ran.count(l) == 0;
            ASSERT_EQ(a.count(), expected) << "round " << round << ", event " << i;
        }
    }
}

// ---- the window: what reaches the file ----

class KeptRows : public RowSink {
public:
    void addKernel(const KernelRow& r) override { kernels.push_back(r.correlationId); }
    void addCopy(const CopyRow& r) override { copies.push_back(r.correlationId); }
    void addMemset(const MemsetRow& r) override { memsets.push_back(r.correlationId); }
    void addSync(const SyncRow& r) override { syncs.push_back(r.correlationId); }
    void addApiCall(const ApiCallRow& r) override { calls.push_back(r.correlationId); }
    void addRange(const RangeRow&) override { ++ranges; }
    void addCollective(const CollectiveRow&) override {}
    void addCudaEvent(const CudaEventRow& r) override { events.push_back(r.correlationId); }
    std::vector<uint32_t> kernels, copies, memsets, syncs, calls, events;
    int ranges = 0;
};

TEST(StopWindowSink, GpuRecordsOfWorkLaunchedAfterTheStopAreLeftOut) {
    KeptRows file;
    StopWindowSink w(file);
    auto gpu = [&](uint32_t id) {
        KernelRow k;
        k.correlationId = id;
        w.addKernel(k);
        CopyRow c;
        c.correlationId = id;
        w.addCopy(c);
        MemsetRow m;
        m.correlationId = id;
        w.addMemset(m);
        SyncRow s;
        s.correlationId = id;
        w.addSync(s);
        CudaEventRow e;
        e.correlationId = id;
        w.addCudaEvent(e);
    };
    gpu(50);       // open window: everything passes
    w.closeAt(0);  // the first id after the stop not known yet
    gpu(60);
    w.closeAt(40);
    gpu(0);  // no correlation: not launched after the stop
    gpu(39);
    gpu(40);
    gpu(41);
    w.addApiCall(call("cudaLaunchKernel_v7000", 45));  // calls pass: their records were made before the stop
    w.addRange(RangeRow{});
    const std::vector<uint32_t> kept = {50, 60, 0, 39};
    EXPECT_EQ(file.kernels, kept);
    EXPECT_EQ(file.copies, kept);
    EXPECT_EQ(file.memsets, kept);
    EXPECT_EQ(file.syncs, kept);
    EXPECT_EQ(file.events, kept);
    EXPECT_EQ(file.calls, (std::vector<uint32_t>{45}));
    EXPECT_EQ(file.ranges, 1);
    EXPECT_EQ(w.leftOut(), 10u);  // five records each of 40 and 41
    EXPECT_EQ(w.awaited().count(), 1u) << "launch 45 still waits; its kernel was never seen";
}

// ---- whole captures with the fake GPU ----

ProcessIdentity testIdentity() {
    ProcessIdentity who;
    who.host = "testhost";
    who.pid = ::getpid();
    who.commandLine = "train.py";
    who.executable = "train.py";
    return who;
}

struct Correlations {
    std::set<uint32_t> launches, kernels;
    std::map<std::string, std::string> meta;
};

Correlations correlationsIn(const std::string& path) {
    Correlations c;
    const Capture cap = loadCapture(path);
    for (const Process& p : cap.processes) {
        c.meta = p.meta;
        for (size_t i = 0; i < p.apiCalls.size(); ++i) {
            if (cap.strings.at(p.apiCalls.name[i]).rfind("cudaLaunchKernel", 0) != 0) continue;
            EXPECT_TRUE(c.launches.insert(p.apiCalls.correlation[i]).second) << "a launch written twice";
        }
        for (const Device& d : p.devices) {
            for (uint32_t id : d.kernels.correlation) {
                EXPECT_TRUE(c.kernels.insert(id).second) << "a kernel written twice";
            }
        }
    }
    return c;
}

std::vector<uint32_t> missing(const std::set<uint32_t>& from, const std::set<uint32_t>& in) {
    std::vector<uint32_t> out;
    std::set_difference(from.begin(), from.end(), in.begin(), in.end(), std::back_inserter(out));
    return out;
}

class StopGrace : public ::testing::Test {
protected:
    // A job launching 3,000 kernels a second whose GPU runs each one
    // `latencyMs` after its launch.
    static FakeSourceOptions gpu(int latencyMs, uint64_t hangingLaunch = 0) {
        FakeSourceOptions o;
        o.recordsPerSecond = 4000;  // paces the steps: 1,000 a second of 3 launches each
        o.gpuLatencyNs = int64_t{latencyMs} * 1'000'000;
        o.hangingLaunch = hangingLaunch;
        return o;
    }
    // Captures for `runMs`, then stops `how`; returns how long stop() took (s).
    double capture(FakeActivitySource& source, int graceMs, int runMs, CaptureEnd how) {
        SessionConfig cfg;
        cfg.path = path;
        cfg.who = testIdentity();
        cfg.commitIntervalMs = 100;
        cfg.stopGraceMs = graceMs;
        CaptureSession session(cfg, source, pool);
        std::string error;
        EXPECT_EQ(session.start(error), CaptureSession::Start::Started) << error;
        std::this_thread::sleep_for(std::chrono::milliseconds(runMs));
        const auto t0 = std::chrono::steady_clock::now();
        session.stop(how);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_EQ(session.droppedRecords(), 0u);
        return s;
    }

    test::TempDir dir;
    std::string path = dir / "cap.sqlite";
    BufferPool pool{16u << 20, 256u << 10};
};

TEST_F(StopGrace, KernelsInFlightAtAStopByRequestReachTheFile) {
    FakeActivitySource source(gpu(/*latencyMs=*/150));
    capture(source, /*graceMs=*/5000, /*runMs=*/400, CaptureEnd::Stopped);
    ASSERT_GT(source.inFlightAtStop(), 0u) << "nothing was running on the GPU at the stop: the test proves nothing";

    const Correlations c = correlationsIn(path);
    EXPECT_GT(c.launches.size(), 300u);
    EXPECT_EQ(c.kernels.size(), c.launches.size());
    EXPECT_TRUE(missing(c.launches, c.kernels).empty())
        << missing(c.launches, c.kernels).size() << " launches without their kernel, " << source.inFlightAtStop()
        << " kernels were running at the stop";
    EXPECT_TRUE(missing(c.kernels, c.launches).empty()) << "kernels of launches after the stop";
    EXPECT_EQ(c.meta.at("end_reason"), "stopped");
    EXPECT_EQ(c.meta.at("stop_grace_ms"), "5000");
    EXPECT_EQ(c.meta.at("stop_grace_unfinished_launches"), "0");
}

TEST_F(StopGrace, WorkLaunchedAfterTheStopIsNotInTheFile) {
    // Launch 30's kernel never finishes, so the grace lasts its whole 400 ms,
    // while the job goes on launching and the GPU runs those kernels 20 ms later.
    FakeActivitySource source(gpu(/*latencyMs=*/20, /*hangingLaunch=*/30));
    capture(source, /*graceMs=*/400, /*runMs=*/300, CaptureEnd::Stopped);
    const uint32_t firstAfterStop = source.firstCorrelationAfterStop();
    ASSERT_GT(firstAfterStop, 30u);
    ASSERT_GT(source.kernelsLaunchedAfterStop(), 0u) << "the GPU ran nothing launched after the stop: proves nothing";

    const Correlations c = correlationsIn(path);
    ASSERT_FALSE(c.kernels.empty());
    EXPECT_TRUE(missing(c.kernels, c.launches).empty())
        << missing(c.kernels, c.launches).size() << " kernels without their launch (launched after the stop)";
    EXPECT_LT(*c.kernels.rbegin(), firstAfterStop);
    EXPECT_LT(*c.launches.rbegin(), firstAfterStop);
    EXPECT_EQ(missing(c.launches, c.kernels), (std::vector<uint32_t>{30}));
    EXPECT_EQ(c.meta.at("stop_grace_records_left_out"), std::to_string(source.kernelsLaunchedAfterStop()));
}

TEST_F(StopGrace, AKernelThatNeverFinishesHoldsTheStopOnlyUntilTheDeadline) {
    FakeActivitySource source(gpu(/*latencyMs=*/5, /*hangingLaunch=*/10));
    const double stopS = capture(source, /*graceMs=*/300, /*runMs=*/150, CaptureEnd::Stopped);
    EXPECT_GE(stopS, 0.3) << "the stop did not wait for the kernel still running";
    EXPECT_LT(stopS, 0.3 + 10.0) << "the deadline was not honoured";  // generous: a loaded machine
    const Correlations c = correlationsIn(path);
    EXPECT_GE(std::stoll(c.meta.at("stop_grace_waited_ns")), 300'000'000);
    EXPECT_EQ(c.meta.at("stop_grace_unfinished_launches"), "1");
    EXPECT_EQ(missing(c.launches, c.kernels), (std::vector<uint32_t>{10}));
}

// The kernels still running at the stop are lost, as before the grace existed.
void expectInFlightKernelsLost(const Correlations& c) {
    EXPECT_GT(c.launches.size(), c.kernels.size()) << "the kernels running at the stop were waited for";
    EXPECT_TRUE(missing(c.kernels, c.launches).empty());
    for (const char* key :
         {"stop_grace_ms", "stop_grace_waited_ns", "stop_grace_unfinished_launches", "stop_grace_records_left_out"})
        EXPECT_EQ(c.meta.count(key), 0u) << key;
}

TEST_F(StopGrace, ZeroStopsAtOnceAsBefore) {
    FakeActivitySource source(gpu(/*latencyMs=*/300));
    capture(source, /*graceMs=*/0, /*runMs=*/500, CaptureEnd::Stopped);
    EXPECT_EQ(source.inFlightAtStop(), 0u) << "the source was asked to stop recording launches";
    const Correlations c = correlationsIn(path);
    expectInFlightKernelsLost(c);
    EXPECT_EQ(c.meta.at("end_reason"), "stopped");
}

TEST_F(StopGrace, ExitAndSignalDoNotWait) {
    for (const CaptureEnd how : {CaptureEnd::ProcessExit, CaptureEnd::Signal}) {
        SCOPED_TRACE(how == CaptureEnd::Signal ? "signal" : "process exit");
        FakeActivitySource source(gpu(/*latencyMs=*/300));
        path = dir / (how == CaptureEnd::Signal ? "signal.sqlite" : "exit.sqlite");
        const double stopS = capture(source, /*graceMs=*/60000, /*runMs=*/500, how);
        EXPECT_LT(stopS, 30.0);
        EXPECT_EQ(source.inFlightAtStop(), 0u);
        const Correlations c = correlationsIn(path);
        expectInFlightKernelsLost(c);
        EXPECT_EQ(c.meta.at("end_reason"), how == CaptureEnd::Signal ? "signal" : "process_exit");
    }
}

}  // namespace
}  // namespace osc::agent

// A stand-in for CUPTI that needs no GPU: a producer thread (playing the
// application and CUPTI's buffer filling) writes fixed-size records of a
// scripted training loop into buffers taken from the agent's pool. Used by
// liboverlapscope-agent-fake.so (end-to-end tests of run/attach/detach/ps)
// and by the writer benchmark.
//
// With a GPU latency it also plays the GPU: each kernel gets a launch record
// (cudaLaunchKernel, same correlation id) when launched, and its own record
// only once the "GPU" has run it, so kernels are in flight when a capture
// stops (the stop grace, capture_session.h).
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/kernel_names.h"
#include "agent/fake/paced_training.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace osc::agent {

// The record the fake source writes: one per kernel, copy or NVTX range.
struct FakeRecord {
    enum Kind : uint32_t { Kernel = 1, Copy = 2, Range = 3, Launch = 4 };
    uint32_t kind = Kernel;
    uint32_t nameIndex = 0;  // into fakeKernelNames(); a Launch's is its kernel's
    int64_t start = 0, end = 0;
    uint32_t deviceId = 0, streamId = 0, correlationId = 0, contextId = 1;
    uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    uint64_t bytes = 0;
    uint64_t step = 0;
};

struct FakeSourceOptions {
    double recordsPerSecond = 20000;  // 0 = as fast as possible
    bool waitForBuffers = false;      // true: retry instead of dropping (benchmark)
    uint64_t maxRecords = 0;          // stop producing after this many (0 = no limit)
    bool kernelsOnly = false;         // no NVTX ranges (benchmark of kernel rows)
    size_t metadataPaddingBytes = 0;  // a metadata value this long: a first commit too big to fit (tests)
    // > 0: launch records, and each kernel's record this long after its
    // launch (when the GPU has run it). 0: the plain loop, every record at once.
    int64_t gpuLatencyNs = 0;
    // With gpuLatencyNs: the kernel of this launch (1 = the first) never finishes.
    uint64_t hangingLaunch = 0;
    // NCCL SendRecv kernels at fixed CLOCK_REALTIME times besides the loop's:
    // those of the sends and receives a test job plays on the agent's NCCL
    // plugin (fake_job --p2p), so its rows have kernels to land on.
    struct Kernels {
        int64_t firstStartNs = 0, periodNs = 0, durationNs = 0;
        int count = 0;
    } sendRecv;
    // stepNs > 0: the wall-clock paced training loop of paced_training.h
    // instead of the loop above (recordsPerSecond and gpuLatencyNs unused).
    PacedTrainingOptions paced;
    // The paced loop sleeps at least this long between wake-ups, and records
    // what fell due meanwhile together (never early: late, as CUPTI's
    // buffers are). 0 wakes for every launch: 2,000 launches a step cost the
    // fake GPU thread more CPU than the agent, which a benchmark of the
    // agent's overhead must not count.
    int64_t wakeNs = 0;
    // How long stop() takes after the last record, as a real GPU's flush
    // does; tests of what runs beside a closing capture stretch it.
    int64_t stopNs = 0;
};

struct PendingCollective;

// The names the generator uses; some mangled, some NCCL kernels.
const char* const* fakeKernelNames(size_t* count);

class FakeActivitySource final : public ActivitySource {
public:
    explicit FakeActivitySource(FakeSourceOptions options);
    ~FakeActivitySource() override;

    // OVERLAPSCOPE_FAKE_RATE (records/s), OVERLAPSCOPE_FAKE_SENDRECV
    // (FIRST_START_NS,COUNT,PERIOD_NS,DURATION_NS: sendRecv),
    // OVERLAPSCOPE_FAKE_GPU_LATENCY_MS (gpuLatencyNs) and, for the paced
    // loop, OVERLAPSCOPE_FAKE_STEP_MS, _KERNELS (compute kernels per step),
    // _DEVICES, _DEVICE_SKEW_MS, _NCCL_BYTES, _WAKE_MS (wakeNs) and _STOP_MS (stopNs) configure
    // the injected fake agent.
    static FakeSourceOptions optionsFromEnvironment();

    // Where the paced loop's all-reduces go as NCCL plugin rows (with
    // paced.collectiveBytes): the agent, as its NCCL plugin would. Set
    // before start(); called on the producer thread. Their sequence numbers
    // count per communicator from its creation, as NCCL's do: the fake
    // communicator is made at paced step 0 on every rank, so all-reduce k
    // of step n is number n * (all-reduces per step) + k whenever a capture
    // starts.
    void setCollectiveSink(std::function<void(PendingCollective&&)> sink) { collectiveSink_ = std::move(sink); }
    // The all-reduces launched and not complete (a stall, paced.stallAtNs),
    // as the NCCL plugin reports its operations still running: rows without
    // a GPU end. Any thread.
    std::vector<PendingCollective> openCollectives() const;

    const char* name() const override { return "fake"; }
    bool start(BufferSink& sink, std::string& error) override;
    void stop() override;
    bool stopRecordingLaunches() override;
    uint32_t firstCorrelationAfterStop() const override { return firstAfterStop_.load(); }
    void flush() override;
    void decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context, RowSink& rows) override;
    int64_t timestampNs() const override;
    uint64_t takeDroppedRecords() override { return dropped_.exchange(0); }
    std::map<std::string, std::string> metadata() const override;

    uint64_t producedRecords() const { return produced_.load(); }
    bool finished() const { return finished_.load(); }
    // With gpuLatencyNs: launches made so far, kernels running when
    // stopRecordingLaunches() came, and kernel records written since for
    // work launched after it (none of them belongs in the capture).
    uint64_t launches() const { return launches_.load(); }
    uint64_t inFlightAtStop() const { return inFlightAtStop_.load(); }
    uint64_t kernelsLaunchedAfterStop() const { return kernelsAfterStop_.load(); }

private:
    void produce();
    void producePaced();
    // Sleeps until `realtimeNs`, running due kernels; false once stopped.
    bool waitUntil(int64_t realtimeNs);
    void queueKernel(const FakeRecord& kernel, int64_t finishesAtNs, uint64_t seq = 0, int64_t launchedAtNs = 0);
    // The plugin row of a paced all-reduce launched at `launchedAtNs` (NCCL
    // reports it to the plugin as it launches the kernel); gpuEnd -1 while it runs.
    PendingCollective collectiveRow(const FakeRecord& kernel, uint64_t seq, int64_t launchedAtNs, int64_t gpuEnd) const;
    // One step of the training loop: the plain one, or launches to the GPU.
    void emitStep(int64_t t0, uint64_t step);
    void launchStep(int64_t t0, uint64_t step);
    void finishDueKernels();
    void emitSendRecvKernels();
    bool emit(const FakeRecord& record);  // false when dropped
    void completeCurrent();

    FakeSourceOptions options_;
    BufferSink* sink_ = nullptr;
    std::thread thread_;
    std::atomic<bool> running_{false};
    std::atomic<bool> finished_{false};
    std::mutex bufferMutex_;  // the buffer being filled (producer vs. flush)
    uint8_t* current_ = nullptr;
    size_t currentSize_ = 0, currentUsed_ = 0;
    std::atomic<uint64_t> dropped_{0}, produced_{0};
    KernelNameCache names_;

    // What the application is doing, against stopRecordingLaunches(): with a
    // GPU latency a step is launched under this lock, so after that call
    // returns no launch or range record is written and every later launch
    // has an id of at least firstAfterStop_. The plain loop (the benchmark's)
    // only reads the flag: it waits for nothing at a stop.
    mutable std::mutex launchMutex_;
    std::atomic<bool> recording_{true};
    std::atomic<uint32_t> correlation_{1};  // the next id; the producer alone writes it
    uint32_t nextCorrelation() {
        const uint32_t id = correlation_.load(std::memory_order_relaxed);
        correlation_.store(id + 1, std::memory_order_relaxed);
        return id;
    }
    struct InFlight {
        FakeRecord kernel;
        int64_t finishesAtNs = 0;
        int64_t launchedAtNs = 0;
        uint64_t seq = 0;  // the paced loop's plugin row number (comm kernels)
    };
    std::deque<InFlight> inFlight_;  // launched, not yet run; by finishing time
    std::function<void(PendingCollective&&)> collectiveSink_;
    std::vector<PendingCollective> openRows_;  // launched, never to complete (launchMutex_)
    std::atomic<uint32_t> firstAfterStop_{0};
    std::atomic<uint64_t> launches_{0}, inFlightAtStop_{0}, kernelsAfterStop_{0};
};

}  // namespace osc::agent

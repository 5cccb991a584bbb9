// A stand-in for CUPTI that needs no GPU: a producer thread (playing the
// application and CUPTI's buffer filling) writes fixed-size records of a
// scripted training loop into buffers taken from the agent's pool. Used by
// liboverlapscope-agent-fake.so (end-to-end tests of run/attach/detach/ps)
// and by the writer benchmark.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/kernel_names.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

namespace osc::agent {

// The record the fake source writes: one per kernel, copy or NVTX range.
struct FakeRecord {
    enum Kind : uint32_t { Kernel = 1, Copy = 2, Range = 3 };
    uint32_t kind = Kernel;
    uint32_t nameIndex = 0;  // into fakeKernelNames()
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
    // NCCL SendRecv kernels at fixed CLOCK_REALTIME times besides the loop's:
    // those of the sends and receives a test job plays on the agent's NCCL
    // plugin (fake_job --p2p), so its rows have kernels to land on.
    struct Kernels {
        int64_t firstStartNs = 0, periodNs = 0, durationNs = 0;
        int count = 0;
    } sendRecv;
};

// The names the generator uses; some mangled, some NCCL kernels.
const char* const* fakeKernelNames(size_t* count);

class FakeActivitySource final : public ActivitySource {
public:
    explicit FakeActivitySource(FakeSourceOptions options);
    ~FakeActivitySource() override;

    // OVERLAPSCOPE_FAKE_RATE (records/s) and OVERLAPSCOPE_FAKE_SENDRECV
    // (FIRST_START_NS,COUNT,PERIOD_NS,DURATION_NS: sendRecv) configure the
    // injected fake agent.
    static FakeSourceOptions optionsFromEnvironment();

    const char* name() const override { return "fake"; }
    bool start(BufferSink& sink, std::string& error) override;
    void stop() override;
    void flush() override;
    void decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context,
                RowSink& rows) override;
    int64_t timestampNs() const override;
    uint64_t takeDroppedRecords() override { return dropped_.exchange(0); }
    std::map<std::string, std::string> metadata() const override;

    uint64_t producedRecords() const { return produced_.load(); }
    bool finished() const { return finished_.load(); }

private:
    void produce();
    void emitSendRecvKernels(uint32_t& correlation);
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
};

}  // namespace osc::agent

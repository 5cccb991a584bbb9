// Where capture rows go, for everything that produces them: the agent's
// decoders (CUPTI, the fake GPU, recordings) and synth's workload models. A
// capture file takes them through WriterRowSink; tests and synth's in-memory
// processes implement the interface themselves.
#pragma once

#include "analyzer/capture/capture_writer.h"

#include <atomic>
#include <cstdint>
#include <string_view>

namespace osc {

class RowSink {
public:
    virtual ~RowSink() = default;
    virtual void addKernel(const KernelRow& row) = 0;
    virtual void addCopy(const CopyRow& row) = 0;
    virtual void addMemset(const MemsetRow& row) = 0;
    virtual void addSync(const SyncRow& row) = 0;
    virtual void addApiCall(const ApiCallRow& row) = 0;
    virtual void addRange(const RangeRow& row) = 0;
    virtual void addCollective(const CollectiveRow& row) = 0;

    // Rows that describe rather than time: GPUs, event records, NVTX names.
    // No-ops here so that sinks which only count or discard activity (tests,
    // benchmarks) need not spell them out; WriterRowSink stores them all.
    virtual void addGpu(const GpuInfo&) {}
    virtual void addCudaEvent(const CudaEventRow&) {}
    virtual void addStreamName(uint64_t /*globalPid*/, uint32_t /*deviceId*/, uint32_t /*streamId*/,
                               std::string_view /*name*/) {}
    virtual void addThreadName(uint64_t /*globalTid*/, std::string_view /*name*/) {}
    virtual void addObjectName(const ObjectNameRow&) {}

    // The sink's id for a string it will be given again (KernelRow's
    // demangledNameId / shortNameId), or kNoId for a sink that keeps text.
    // Decoders cache ids per sink, keyed by serial(): the same name then
    // costs no hashing per row.
    virtual uint32_t stringId(std::string_view) { return kNoId; }
    // Unique among the process's sinks, so a decoder's cached ids are never
    // taken for another capture's (a new sink may reuse an old one's address).
    uint64_t serial() const { return serial_; }

private:
    static uint64_t nextSerial() {
        static std::atomic<uint64_t> next{1};
        return next.fetch_add(1, std::memory_order_relaxed);
    }
    uint64_t serial_ = nextSerial();
};

// Forwards every row to a CaptureWriter. Who commits differs: the agent's
// writer thread commits on a clock (at least once a second) and passes no
// batch size; synth generates as fast as it can and commits every
// `commitEveryRows` timed rows, which keeps the WAL small and a
// transaction's cost spread over many rows.
class WriterRowSink final : public RowSink {
public:
    explicit WriterRowSink(CaptureWriter& writer, uint64_t commitEveryRows = 0)
        : w_(writer), commitEveryRows_(commitEveryRows) {}
    void addKernel(const KernelRow& r) override {
        w_.addKernel(r);
        counted();
    }
    void addCopy(const CopyRow& r) override {
        w_.addCopy(r);
        counted();
    }
    void addMemset(const MemsetRow& r) override {
        w_.addMemset(r);
        counted();
    }
    void addSync(const SyncRow& r) override {
        w_.addSync(r);
        counted();
    }
    void addApiCall(const ApiCallRow& r) override {
        w_.addApiCall(r);
        counted();
    }
    void addRange(const RangeRow& r) override {
        w_.addRange(r);
        counted();
    }
    void addCollective(const CollectiveRow& r) override {
        w_.addCollective(r);
        counted();
    }
    void addCudaEvent(const CudaEventRow& r) override {
        w_.addCudaEvent(r);
        counted();
    }
    void addGpu(const GpuInfo& g) override { w_.addGpu(g); }
    void addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name) override {
        w_.addStreamName(globalPid, deviceId, streamId, name);
    }
    void addThreadName(uint64_t globalTid, std::string_view name) override { w_.addThreadName(globalTid, name); }
    void addObjectName(const ObjectNameRow& r) override { w_.addObjectName(r); }
    uint32_t stringId(std::string_view text) override { return w_.internString(text); }

private:
    void counted() {
        if (commitEveryRows_ != 0 && ++sinceCommit_ >= commitEveryRows_) {
            w_.commit();
            sinceCommit_ = 0;
        }
    }

    CaptureWriter& w_;
    const uint64_t commitEveryRows_;  // 0: the owner of the writer commits
    uint64_t sinceCommit_ = 0;
};

}  // namespace osc

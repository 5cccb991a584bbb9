// Where decoded activity rows go. The writer thread passes a sink backed by
// the capture file; tests pass one that keeps the rows in memory.
#pragma once

#include "analyzer/capture/capture_writer.h"

#include <atomic>

namespace osc::agent {

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

// Counts the activity rows (kernels, copies, ... collectives) and keeps
// nothing: how many records a buffer the agent will not write held, and the
// benchmark's sink without SQLite.
class CountingRowSink final : public RowSink {
public:
    void addKernel(const KernelRow&) override { ++rows; }
    void addCopy(const CopyRow&) override { ++rows; }
    void addMemset(const MemsetRow&) override { ++rows; }
    void addSync(const SyncRow&) override { ++rows; }
    void addApiCall(const ApiCallRow&) override { ++rows; }
    void addRange(const RangeRow&) override { ++rows; }
    void addCollective(const CollectiveRow&) override { ++rows; }
    uint64_t rows = 0;
};

// Forwards every row to a CaptureWriter.
class WriterRowSink final : public RowSink {
public:
    explicit WriterRowSink(CaptureWriter& writer) : w_(writer) {}
    void addKernel(const KernelRow& r) override { w_.addKernel(r); }
    void addCopy(const CopyRow& r) override { w_.addCopy(r); }
    void addMemset(const MemsetRow& r) override { w_.addMemset(r); }
    void addSync(const SyncRow& r) override { w_.addSync(r); }
    void addApiCall(const ApiCallRow& r) override { w_.addApiCall(r); }
    void addRange(const RangeRow& r) override { w_.addRange(r); }
    void addCollective(const CollectiveRow& r) override { w_.addCollective(r); }
    void addGpu(const GpuInfo& g) override { w_.addGpu(g); }
    void addCudaEvent(const CudaEventRow& r) override { w_.addCudaEvent(r); }
    void addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId,
                       std::string_view name) override {
        w_.addStreamName(globalPid, deviceId, streamId, name);
    }
    void addThreadName(uint64_t globalTid, std::string_view name) override { w_.addThreadName(globalTid, name); }
    void addObjectName(const ObjectNameRow& r) override { w_.addObjectName(r); }
    uint32_t stringId(std::string_view text) override { return w_.internString(text); }

private:
    CaptureWriter& w_;
};

}  // namespace osc::agent

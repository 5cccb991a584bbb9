// The capture's rows on their way to the file, seen by the stop grace
// (capture_session.h): every launch and GPU record goes past
// AwaitedLaunches, and once the window is closed the GPU records of work
// launched after the stop instant are left out, so the window stays the
// window while the GPU finishes what was launched inside it.
#pragma once

#include "agent/core/awaited_launches.h"
#include "analyzer/capture/row_sink.h"

#include <cstdint>

namespace osc::agent {

class StopWindowSink final : public RowSink {
public:
    explicit StopWindowSink(RowSink& file) : file_(file) {}

    // From now on, GPU records (kernels, copies, memsets, syncs, event
    // records) with a correlation id of `firstAfterStop` or more are work
    // launched after the stop instant and are left out; 0 = not known yet.
    // Writer thread.
    void closeAt(uint32_t firstAfterStop) { firstAfterStop_ = firstAfterStop; }
    const AwaitedLaunches& awaited() const { return awaited_; }
    uint64_t leftOut() const { return leftOut_; }

    void addKernel(const KernelRow& r) override {
        awaited_.gpuRecord(r.correlationId);
        if (inWindow(r.correlationId)) file_.addKernel(r);
    }
    void addCopy(const CopyRow& r) override {
        awaited_.gpuRecord(r.correlationId);
        if (inWindow(r.correlationId)) file_.addCopy(r);
    }
    void addMemset(const MemsetRow& r) override {
        awaited_.gpuRecord(r.correlationId);
        if (inWindow(r.correlationId)) file_.addMemset(r);
    }
    void addSync(const SyncRow& r) override {
        if (inWindow(r.correlationId)) file_.addSync(r);
    }
    void addCudaEvent(const CudaEventRow& r) override {
        if (inWindow(r.correlationId)) file_.addCudaEvent(r);
    }
    void addApiCall(const ApiCallRow& r) override {
        awaited_.apiCall(r);
        file_.addApiCall(r);
    }
    void addRange(const RangeRow& r) override { file_.addRange(r); }
    void addCollective(const CollectiveRow& r) override { file_.addCollective(r); }
    void addGpu(const GpuInfo& g) override { file_.addGpu(g); }
    void addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name) override {
        file_.addStreamName(globalPid, deviceId, streamId, name);
    }
    void addThreadName(uint64_t globalTid, std::string_view name) override { file_.addThreadName(globalTid, name); }
    void addObjectName(const ObjectNameRow& r) override { file_.addObjectName(r); }
    uint32_t stringId(std::string_view text) override { return file_.stringId(text); }

private:
    bool inWindow(uint32_t correlationId) {
        if (firstAfterStop_ == 0 || correlationId < firstAfterStop_) return true;
        ++leftOut_;
        return false;
    }

    RowSink& file_;
    AwaitedLaunches awaited_;
    uint32_t firstAfterStop_ = 0;
    uint64_t leftOut_ = 0;
};

}  // namespace osc::agent

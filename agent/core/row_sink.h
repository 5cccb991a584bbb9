// Where decoded activity rows go. The writer thread passes a sink backed by
// the capture file; tests pass one that keeps the rows in memory.
#pragma once

#include "analyzer/capture/capture_writer.h"

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

private:
    CaptureWriter& w_;
};

}  // namespace osc::agent

// Counts the activity rows (kernels, copies, ... collectives) and keeps
// nothing: how many records a buffer the agent will not write held, and the
// benchmark's sink without SQLite.
#pragma once

#include "analyzer/capture/row_sink.h"

#include <cstdint>

namespace osc::agent {

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

}  // namespace osc::agent

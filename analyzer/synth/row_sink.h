// Where generated rows go. The generators emit capture-writer rows; one sink
// builds an in-memory Process (tests, GUI), another streams them into a file
// through CaptureWriter, so a 10-million-kernel capture never sits in memory.
#pragma once

#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/model.h"

#include <cstdint>
#include <memory>
#include <string>

namespace osc::synth {

// Who a generated process claims to be.
struct ProcessIdentity {
    std::string host;
    int64_t pid = 0;
    int rank = -1, localRank = -1, worldSize = -1;
    std::string commandLine;
    int64_t sessionStartUtcNs = 0;
    GpuInfo gpu;
};

class RowSink {
public:
    virtual ~RowSink() = default;
    virtual void kernel(const KernelRow& row) = 0;
    virtual void apiCall(const ApiCallRow& row) = 0;
    virtual void range(const RangeRow& row) = 0;
    virtual void collective(const CollectiveRow& row) = 0;
};

// Appends rows to `process` (columns in the capture model), interning names in
// `capture.strings`. Fills the process's identity fields on construction.
class ProcessSink : public RowSink {
public:
    ProcessSink(Capture& capture, Process& process, const ProcessIdentity& who);
    void kernel(const KernelRow& row) override;
    void apiCall(const ApiCallRow& row) override;
    void range(const RangeRow& row) override;
    void collective(const CollectiveRow& row) override;

private:
    Capture& capture_;
    Process& process_;
};

// Streams rows into a new capture file; commits every `batchRows` rows.
class WriterSink : public RowSink {
public:
    WriterSink(const std::string& path, const ProcessIdentity& who, bool overwrite);
    ~WriterSink() override;
    void kernel(const KernelRow& row) override;
    void apiCall(const ApiCallRow& row) override;
    void range(const RangeRow& row) override;
    void collective(const CollectiveRow& row) override;
    void close();  // commits and adds the indexes; the destructor calls it too

private:
    void counted();
    std::unique_ptr<CaptureWriter> writer_;
    uint64_t sinceCommit_ = 0;
};

}  // namespace osc::synth

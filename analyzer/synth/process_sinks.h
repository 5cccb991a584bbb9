// Where a generated process's rows go. The models emit capture-writer rows
// into a RowSink (analyzer/capture/row_sink.h): ProcessSink builds an
// in-memory Process (tests, GUI); ProcessFile streams them into a new capture
// file through WriterRowSink, so a 10-million-kernel capture never sits in
// memory.
#pragma once

#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/model.h"
#include "analyzer/capture/row_sink.h"

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

// Appends rows to `process` (columns in the capture model), interning names in
// `capture.strings`. Fills the process's identity fields on construction.
class ProcessSink final : public RowSink {
public:
    ProcessSink(Capture& capture, Process& process, const ProcessIdentity& who);
    void addKernel(const KernelRow& row) override;
    void addCopy(const CopyRow& row) override;
    void addMemset(const MemsetRow& row) override;
    void addSync(const SyncRow& row) override;
    void addApiCall(const ApiCallRow& row) override;
    void addRange(const RangeRow& row) override;
    void addCollective(const CollectiveRow& row) override;

private:
    Capture& capture_;
    Process& process_;
};

// A new capture file holding one generated process: its identity, then the
// rows given to rows(), committed in large batches.
class ProcessFile {
public:
    ProcessFile(const std::string& path, const ProcessIdentity& who, bool overwrite);
    ~ProcessFile();
    ProcessFile(const ProcessFile&) = delete;
    ProcessFile& operator=(const ProcessFile&) = delete;

    RowSink& rows() { return rows_; }
    void close();  // commits and adds the indexes; the destructor calls it too

private:
    std::unique_ptr<CaptureWriter> writer_;
    WriterRowSink rows_;
};

}  // namespace osc::synth

#include "analyzer/capture/schema.h"
#include "analyzer/synth/row_sink.h"

namespace osc::synth {
namespace {
// Large batches keep SQLite's per-transaction cost out of the generation time.
constexpr uint64_t kBatchRows = 200'000;
}  // namespace

WriterSink::WriterSink(const std::string& path, const ProcessIdentity& who, bool overwrite)
    : writer_(CaptureWriter::create(path, who.sessionStartUtcNs, overwrite)) {
    writer_->setMeta(schema::meta::kHost, who.host);
    writer_->setMeta(schema::meta::kPid, std::to_string(who.pid));
    writer_->setMeta(schema::meta::kRank, std::to_string(who.rank));
    writer_->setMeta(schema::meta::kLocalRank, std::to_string(who.localRank));
    writer_->setMeta(schema::meta::kWorldSize, std::to_string(who.worldSize));
    writer_->setMeta(schema::meta::kCommandLine, who.commandLine);
    writer_->addGpu(who.gpu);
    writer_->addProcess(
        ProcessRow{schema::packGlobalPid(who.pid), who.pid, who.commandLine});
}

WriterSink::~WriterSink() {
    try {
        close();
    } catch (...) {
        // A destructor must not throw; close() explicitly to see errors.
    }
}

void WriterSink::close() {
    if (writer_) writer_->close(CaptureEnd::Stopped);
}

void WriterSink::counted() {
    if (++sinceCommit_ >= kBatchRows) {
        writer_->commit();
        sinceCommit_ = 0;
    }
}

void WriterSink::kernel(const KernelRow& row) {
    writer_->addKernel(row);
    counted();
}
void WriterSink::apiCall(const ApiCallRow& row) {
    writer_->addApiCall(row);
    counted();
}
void WriterSink::range(const RangeRow& row) {
    writer_->addRange(row);
    counted();
}
void WriterSink::collective(const CollectiveRow& row) {
    writer_->addCollective(row);
    counted();
}

}  // namespace osc::synth

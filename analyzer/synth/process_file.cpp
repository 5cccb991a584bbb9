#include "analyzer/capture/schema.h"
#include "analyzer/synth/process_sinks.h"

namespace osc::synth {
namespace {
// Large batches keep SQLite's per-transaction cost out of the generation time.
constexpr uint64_t kBatchRows = 200'000;
}  // namespace

ProcessFile::ProcessFile(const std::string& path, const ProcessIdentity& who, bool overwrite)
    : writer_(CaptureWriter::create(path, who.sessionStartUtcNs, overwrite)), rows_(*writer_, kBatchRows) {
    writer_->setMeta(schema::meta::kHost, who.host);
    writer_->setMeta(schema::meta::kPid, std::to_string(who.pid));
    writer_->setMeta(schema::meta::kRank, std::to_string(who.rank));
    writer_->setMeta(schema::meta::kLocalRank, std::to_string(who.localRank));
    writer_->setMeta(schema::meta::kWorldSize, std::to_string(who.worldSize));
    writer_->setMeta(schema::meta::kCommandLine, who.commandLine);
    writer_->addGpu(who.gpu);
    writer_->addProcess(ProcessRow{schema::packGlobalPid(who.pid), who.pid, who.commandLine});
}

ProcessFile::~ProcessFile() {
    try {
        close();
    } catch (...) {
        // A destructor must not throw; close() explicitly to see errors.
    }
}

void ProcessFile::close() { writer_->close(CaptureEnd::Stopped); }

}  // namespace osc::synth

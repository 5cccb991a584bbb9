#include "agent/recording/replay_source.h"

#include "agent/core/buffer_pool.h"
#include "agent/core/capture_session.h"
#include "agent/cupti/cupti_recorder.h"
#include "analyzer/capture/capture_error.h"

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace osc::agent::recording {
namespace {

void checkLayout(const Recording& r) {
    const auto mine = cupti::recordLayout();
    for (const auto& [kind, size] : mine) {
        auto it = r.manifest.layout.find(kind);
        if (it == r.manifest.layout.end() || it->second != size)
            throw CaptureError(r.directory,
                               "recorded with " + kind + " = " +
                                   (it == r.manifest.layout.end() ? std::string("?") : std::to_string(it->second)) +
                                   ", this build reads " + std::to_string(size) +
                                   ": replay it with a build against the same CUDA version's CUPTI headers");
    }
}

}  // namespace

ReplayActivitySource::ReplayActivitySource(const Recording& recording)
    : recording_(recording), decoder_([this](ApiKind kind, uint32_t cbid) {
          auto it = recording_.apiNames.find({kind, cbid});
          return it == recording_.apiNames.end() ? std::string() : it->second;
      }) {
    checkLayout(recording_);
}

ReplayActivitySource::~ReplayActivitySource() { stop(); }

size_t ReplayActivitySource::largestBuffer() const {
    size_t most = 4096;
    for (const auto& b : recording_.buffers) most = std::max(most, (b.validBytes + 7) & ~size_t{7});
    return most;
}

std::map<std::string, std::string> ReplayActivitySource::metadata() const {
    auto m = recording_.manifest.metadata;
    m["replayed_from"] = recording_.directory;
    if (recording_.manifest.fabricated) m["recording_fabricated"] = "1";
    if (recording_.truncated) m["recording_truncated"] = "1";
    return m;
}

bool ReplayActivitySource::start(BufferSink& sink, std::string&) {
    decoder_.reset();
    decodedFor_ = 0;
    {
        std::lock_guard lock(queueMutex_);
        delivered_.clear();
    }
    stopping_ = false;
    finished_ = false;
    thread_ = std::thread([this, &sink] { deliver(sink); });
    return true;
}

void ReplayActivitySource::stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
}

// Plays CUPTI's part: takes a buffer from the pool, fills it, hands it back.
// A replay must not lose records, so it waits for the writer instead of dropping.
void ReplayActivitySource::deliver(BufferSink& sink) {
    for (size_t i = 0; i < recording_.buffers.size() && !stopping_; ++i) {
        const RecordedBuffer& b = recording_.buffers[i];
        size_t size = 0;
        uint8_t* into = nullptr;
        while (!(into = sink.requestBuffer(&size)) && !stopping_)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (!into) break;
        if (size < b.validBytes) {  // cannot happen with a pool sized by largestBuffer()
            dropped_.fetch_add(b.recordOffsets.size());
            sink.bufferCompleted(into, 0);
            continue;
        }
        std::memcpy(into, b.bytes(), b.validBytes);
        {
            std::lock_guard lock(queueMutex_);
            delivered_.push_back(i);
        }
        sink.bufferCompleted(into, b.validBytes);
    }
    finished_ = true;
}

void ReplayActivitySource::decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context,
                                  RowSink& rows) {
    size_t index;
    {
        std::lock_guard lock(queueMutex_);
        if (delivered_.empty() || validBytes == 0) return;  // an empty hand-back
        index = delivered_.front();
        delivered_.pop_front();
    }
    const RecordedBuffer& b = recording_.buffers[index];
    if (decodedFor_ != rows.serial()) {
        // What the live agent learnt from the driver and its own threads.
        for (uint32_t t : recording_.ownThreads) decoder_.ignoreApiCallsOf(t);
        for (const GpuInfo& g : recording_.gpus) decoder_.addDriverGpu(g, rows);
        decodedFor_ = rows.serial();
    }
    scratch_.assign((validBytes + 7) / 8, 0);
    auto* bytes = reinterpret_cast<uint8_t*>(scratch_.data());
    std::memcpy(bytes, buffer, validBytes);
    for (const StringPatch& p : b.patches) {
        const char* text = recording_.strings[p.stringId].c_str();
        std::memcpy(bytes + p.fieldOffset, &text, sizeof(text));
    }
    for (uint32_t offset : b.recordOffsets)
        decoder_.decode(reinterpret_cast<const CUpti_Activity*>(bytes + offset), context, rows);
}

size_t replayToCapture(const Recording& recording, const std::string& capturePath) {
    ReplayActivitySource source(recording);
    const size_t bufferBytes = source.largestBuffer();
    BufferPool pool(bufferBytes * 4, bufferBytes);
    SessionConfig config;
    config.path = capturePath;
    config.who = recording.manifest.who;
    config.commitIntervalMs = 200;
    CaptureSession session(config, source, pool);
    std::string error;
    if (session.start(error) != CaptureSession::Start::Started)
        throw std::runtime_error(recording.directory + ": " + error);
    while (!source.finished()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    session.stop(CaptureEnd::Stopped);
    if (session.broken()) throw std::runtime_error(capturePath + ": writing the replayed capture failed");
    return recording.buffers.size();
}

}  // namespace osc::agent::recording

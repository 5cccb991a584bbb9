// An activity source that plays a raw CUPTI recording back (no GPU, no
// libcupti): its buffers go through the agent's pool and writer thread like
// CUPTI's would, and are decoded by the real CuptiDecoder after the string
// pointers inside the records are pointed at the recorded strings. The
// capture it makes keeps the recorded time 0, so replayed ranks line up.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/cupti/cupti_decoder.h"
#include "agent/recording/recording_format.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

namespace osc::agent::recording {

class ReplayActivitySource final : public ActivitySource {
public:
    // Throws CaptureError naming the recording when this build would read its
    // records differently (other CUPTI struct versions).
    explicit ReplayActivitySource(const Recording& recording);
    ~ReplayActivitySource() override;

    const char* name() const override { return "cupti-replay"; }
    bool start(BufferSink& sink, std::string& error) override;
    void stop() override;
    void flush() override {}
    void decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context, RowSink& rows) override;
    int64_t timestampNs() const override { return recording_.originSourceNs; }
    CaptureOrigin captureOrigin() const override { return {recording_.originSourceNs, recording_.originUtcNs}; }
    uint64_t takeDroppedRecords() override { return dropped_.exchange(0); }
    std::map<std::string, std::string> metadata() const override;

    // Every recorded buffer has been handed to the sink.
    bool finished() const { return finished_.load(); }
    // The pool buffer size that holds the largest recorded buffer.
    size_t largestBuffer() const;

private:
    void deliver(BufferSink& sink);

    const Recording& recording_;
    cupti::CuptiDecoder decoder_;
    std::thread thread_;
    std::atomic<bool> stopping_{false}, finished_{false};
    std::atomic<uint64_t> dropped_{0};
    std::mutex queueMutex_;
    std::deque<size_t> delivered_;  // recorded buffer index of each pool buffer handed over, in order
    std::vector<uint64_t> scratch_;
    uint64_t decodedFor_ = 0;  // RowSink::serial() the GPUs and threads were given to
};

// Replays one recording folder into a capture file at `capturePath` through
// a CaptureSession. Returns the number of recorded buffers; throws
// std::runtime_error naming the folder.
size_t replayToCapture(const Recording& recording, const std::string& capturePath);

}  // namespace osc::agent::recording

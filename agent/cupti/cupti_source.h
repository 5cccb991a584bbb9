// The real activity source: CUPTI's asynchronous activity API. Buffers come
// from the agent's bounded pool through the BufferSink; CUPTI fills them on
// its own schedule and hands them back on its worker thread (or the thread
// that calls FlushAll). Decoding runs on the agent's writer thread.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/cupti/cupti_decoder.h"
#include "agent/cupti/cupti_recorder.h"

#include <cupti.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace osc::agent::cupti {

class CuptiActivitySource final : public ActivitySource {
public:
    CuptiActivitySource();
    ~CuptiActivitySource() override;

    const char* name() const override { return "cupti"; }
    bool start(BufferSink& sink, std::string& error) override;
    void stop() override;
    bool stopRecordingLaunches() override;
    uint32_t firstCorrelationAfterStop() const override { return firstAfterStop_.load(); }
    void flush() override;
    void decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context, RowSink& rows) override;
    int64_t timestampNs() const override;
    uint64_t takeDroppedRecords() override { return dropped_.exchange(0); }
    std::map<std::string, std::string> metadata() const override;

private:
    static void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords);
    static void CUPTIAPI onBufferCompleted(CUcontext context, uint32_t streamId, uint8_t* buffer, size_t size,
                                           size_t validSize);
    // Runtime and driver API entries while the stop grace runs: their
    // correlation ids mark work launched after the stop instant.
    static void CUPTIAPI onApiEnter(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
    void watchApiEntries(bool on);
    void enableKinds();
    void disableKinds();
    // TARGET_INFO_GPU rows from the driver, once per capture file.
    void describeGpus(RowSink& rows);
    // OVERLAPSCOPE_CUPTI_RECORD: the raw buffer also goes to the recording.
    void recordAndDecode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context, RowSink& rows);

    CuptiDecoder decoder_;
    CUpti_SubscriberHandle subscriber_ = nullptr;
    std::mutex sinkMutex_;
    BufferSink* sink_ = nullptr;
    std::vector<CUpti_ActivityKind> enabled_;
    std::string failedKinds_;
    std::string zeroedBuffers_;  // who zeroes activity buffers, for the meta
    std::atomic<bool> running_{false};
    std::atomic<uint64_t> dropped_{0};
    std::atomic<uint32_t> firstAfterStop_{0};
    bool watchingApiEntries_ = false;
    uint32_t runtimeVersion_ = 0;
    bool eventTimestamps_ = false;
    // Writer thread only. Devices do not change while the process runs.
    std::optional<std::vector<GpuInfo>> driverGpus_;
    uint64_t gpusDescribedIn_ = 0;             // RowSink::serial() of the last file described
    std::unique_ptr<CuptiRecorder> recorder_;  // writer thread only
    std::vector<const CUpti_Activity*> records_;
};

}  // namespace osc::agent::cupti

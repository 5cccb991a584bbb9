// Raw CUPTI recording (OVERLAPSCOPE_CUPTI_RECORD=DIR): every completed
// activity buffer of a capture goes byte for byte into
// DIR/<capture stem>.cupti/ (agent/recording/recording_format.h), with what a
// replay needs to decode it on a machine without a GPU: the strings its
// records point to (kernel names, NVTX texts), the API callback names, the
// GPUs the driver described and the agent's own threads.
//
// Pure: it reads the record structs and calls no CUPTI function, so the
// fixture generator (tests/gpu) records hand-built buffers through the same
// code as the agent.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/cupti/cupti_decoder.h"
#include "agent/recording/recording_format.h"

#include <cupti.h>

#include <memory>
#include <string>
#include <vector>

namespace osc::agent::cupti {

// Struct sizes of the record versions this build reads, by kind name, and
// "cupti_api_version_compiled": a replay accepts only recordings that match.
std::map<std::string, int64_t> recordLayout();

// DIR/<capture file name without .sqlite>.cupti
std::string recordingFolderFor(const std::string& recordDirectory, const std::string& capturePath);

class CuptiRecorder {
public:
    CuptiRecorder(std::string recordDirectory, CuptiDecoder::ApiNameFn apiName);

    // Opens the recording of a new capture (RowSink::serial() identifies it)
    // and writes its time 0. A failure here or later prints one line and
    // ends this capture's recording; the capture itself goes on.
    void begin(uint64_t captureSerial, const DecodeContext& context, recording::Manifest manifest);
    bool begunFor(uint64_t captureSerial) const { return serial_ == captureSerial; }
    bool active() const { return writer_ != nullptr; }

    void ownThread(uint32_t threadId);
    void gpus(const std::vector<GpuInfo>& gpus);
    // `records` are the buffer's records in CUPTI's order (pointers into `buffer`).
    void buffer(const uint8_t* buffer, size_t validBytes, const std::vector<const CUpti_Activity*>& records);

private:
    void fail(const std::exception& e);
    void addRecord(const uint8_t* buffer, const CUpti_Activity* record);

    std::string directory_;
    CuptiDecoder::ApiNameFn apiName_;
    std::unique_ptr<recording::RecordingWriter> writer_;
    uint64_t serial_ = 0;
    bool gpusWritten_ = false;
    std::vector<uint32_t> ownThreads_;
    std::vector<uint32_t> offsets_;
    std::vector<recording::StringPatch> patches_;
};

}  // namespace osc::agent::cupti

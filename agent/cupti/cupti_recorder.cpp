#include "agent/cupti/cupti_recorder.h"

#include "agent/cupti/cupti_records.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace osc::agent::cupti {
namespace {

// A string pointer of a record: its offset inside the struct.
void patch(recording::RecordingWriter& w, const CUpti_Activity* r, size_t fieldOffset, uint32_t recordOffset,
           std::vector<recording::StringPatch>& out) {
    const char* text = nullptr;
    std::memcpy(&text, reinterpret_cast<const uint8_t*>(r) + fieldOffset, sizeof(text));
    // Null stays null in the copy: nothing to patch.
    if (text) out.push_back({static_cast<uint32_t>(recordOffset + fieldOffset), w.stringId(text)});
}

}  // namespace

std::map<std::string, int64_t> recordLayout() {
    return {
        {"cupti_api_version_compiled", CUPTI_API_VERSION},
        {"kernel", sizeof(KernelRecord)},
        {"memcpy", sizeof(MemcpyRecord)},
        {"memcpy_ptop", sizeof(MemcpyPtoPRecord)},
        {"memset", sizeof(MemsetRecord)},
        {"synchronization", sizeof(SyncRecord)},
        {"marker", sizeof(MarkerRecord)},
        {"marker_data", sizeof(MarkerDataRecord)},
        {"overhead", sizeof(OverheadRecord)},
        {"cuda_event", sizeof(CudaEventRecord)},
        {"device", sizeof(DeviceRecord)},
        {"api", sizeof(ApiRecord)},
        {"name", sizeof(NameRecord)},
    };
}

std::string recordingFolderFor(const std::string& recordDirectory, const std::string& capturePath) {
    return (std::filesystem::path(recordDirectory) / std::filesystem::path(capturePath).stem()).string() +
           recording::kFolderSuffix;
}

CuptiRecorder::CuptiRecorder(std::string recordDirectory, CuptiDecoder::ApiNameFn apiName)
    : directory_(std::move(recordDirectory)), apiName_(std::move(apiName)) {}

void CuptiRecorder::fail(const std::exception& e) {
    std::fprintf(stderr, "overlapscope-agent: CUPTI recording: %s: recording of this capture stopped\n", e.what());
    writer_.reset();
}

void CuptiRecorder::begin(uint64_t captureSerial, const DecodeContext& context, recording::Manifest manifest) {
    writer_.reset();
    serial_ = captureSerial;
    gpusWritten_ = false;
    ownThreads_.clear();
    manifest.layout = recordLayout();
    try {
        writer_ =
            std::make_unique<recording::RecordingWriter>(recordingFolderFor(directory_, context.capturePath), manifest);
        writer_->writeOrigin(context.sourceOriginNs, context.originUtcNs);
        std::fprintf(stderr, "overlapscope-agent: recording raw CUPTI buffers to %s\n", writer_->directory().c_str());
    } catch (const std::exception& e) {
        fail(e);
    }
}

void CuptiRecorder::ownThread(uint32_t threadId) {
    if (!writer_ || std::find(ownThreads_.begin(), ownThreads_.end(), threadId) != ownThreads_.end()) return;
    ownThreads_.push_back(threadId);
    try {
        writer_->writeOwnThread(threadId);
    } catch (const std::exception& e) {
        fail(e);
    }
}

void CuptiRecorder::gpus(const std::vector<GpuInfo>& gpus) {
    if (!writer_ || gpusWritten_) return;
    gpusWritten_ = true;
    try {
        for (const GpuInfo& g : gpus) writer_->writeGpu(g);
    } catch (const std::exception& e) {
        fail(e);
    }
}

void CuptiRecorder::buffer(const uint8_t* buffer, size_t validBytes,
                           const std::vector<const CUpti_Activity*>& records) {
    if (!writer_) return;
    try {
        offsets_.clear();
        patches_.clear();
        for (const CUpti_Activity* r : records) addRecord(buffer, r);
        writer_->writeBuffer(buffer, validBytes, offsets_, patches_);
    } catch (const std::exception& e) {
        fail(e);
    }
}

void CuptiRecorder::addRecord(const uint8_t* buffer, const CUpti_Activity* r) {
    const auto at = static_cast<uint32_t>(reinterpret_cast<const uint8_t*>(r) - buffer);
    offsets_.push_back(at);
    switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            patch(*writer_, r, offsetof(KernelRecord, name), at, patches_);
            return;
        case CUPTI_ACTIVITY_KIND_MARKER:
            patch(*writer_, r, offsetof(MarkerRecord, name), at, patches_);
            patch(*writer_, r, offsetof(MarkerRecord, domain), at, patches_);
            return;
        case CUPTI_ACTIVITY_KIND_NAME:
            patch(*writer_, r, offsetof(NameRecord, name), at, patches_);
            return;
        case CUPTI_ACTIVITY_KIND_DEVICE:
            patch(*writer_, r, offsetof(DeviceRecord, name), at, patches_);
            return;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
            const auto* api = reinterpret_cast<const ApiRecord*>(r);
            const ApiKind kind = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? ApiKind::Runtime : ApiKind::Driver;
            if (!writer_->hasApiName(kind, api->cbid))
                writer_->writeApiName(kind, api->cbid, apiName_ ? apiName_(kind, api->cbid) : std::string());
            return;
        }
        default:
            return;  // no pointer the decoder reads
    }
}

}  // namespace osc::agent::cupti

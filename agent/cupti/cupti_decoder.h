// Decodes CUPTI activity records into capture rows. Pure: it reads the
// record structs and calls no CUPTI function, so tests feed it records built
// by hand from the real header structs.
//
// State kept across records (writer thread only): the device of each context
// (synchronisation records carry only the context), NVTX ranges whose START
// has been seen but not their END, marker colours from MARKER_DATA, and what
// is known of each GPU (DEVICE records, the driver).
//
// Timed activity is decoded in cupti_decoder.cpp; records that describe
// objects (DEVICE, CUDA_EVENT, NAME) in cupti_object_records.cpp.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/kernel_names.h"

#include <cupti.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace osc::agent::cupti {

class CuptiDecoder {
public:
    // Name of a runtime/driver API callback id (cuptiGetCallbackName in the agent).
    using ApiNameFn = std::function<std::string(ApiKind, uint32_t cbid)>;
    explicit CuptiDecoder(ApiNameFn apiName = {});

    void decode(const CUpti_Activity* record, const DecodeContext& context, RowSink& rows);
    // Forgets ranges still open and cached state (new capture).
    void reset();

    // Records without timestamps (CUPTI ran out of device buffers) and records of kinds we skip.
    uint64_t recordsWithoutTimestamps() const { return noTimestamp_; }
    uint64_t overheadNs() const { return overheadNs_; }

    // A GPU as the driver describes it (driver_info.h). TARGET_INFO_GPU gets
    // one row per GPU: its DEVICE record's fields, completed from the
    // driver's (a record has no PCI location), in whichever order they come. Only
    // GPUs with activity in the capture get a row: the reader makes each GPU
    // of our files a device, and a process sees GPUs it never uses (every
    // rank of a torchrun job sees all eight).
    void addDriverGpu(const GpuInfo& gpu, RowSink& rows);
    // Runtime and driver API records of this thread are the agent's own
    // calls (the driver queries above), not the application's: dropped.
    // Forgotten at reset(), since the system may reuse the thread id.
    // Called for every buffer until the driver answers: each thread once.
    void ignoreApiCallsOf(uint32_t threadId) {
        if (!isOwnThread(threadId)) ownThreads_.push_back(threadId);
    }

private:
    struct OpenRange {
        int64_t start = 0;
        std::string text, domain;
        uint64_t globalTid = 0;
        uint32_t color = 0, category = 0;
    };

    struct KnownGpu {
        std::optional<GpuInfo> record, driver;
    };

    std::string_view apiName(ApiKind kind, uint32_t cbid);
    uint32_t deviceOfContext(uint32_t contextId) const;
    bool isOwnThread(uint32_t threadId) const;
    // Per kernel, copy and memset: a bit test, then the rare first use.
    bool isUsed(uint32_t deviceId) const { return deviceId < usedDevices_.size() && usedDevices_[deviceId]; }
    void useDevice(uint32_t deviceId, RowSink& rows) {
        if (!isUsed(deviceId)) firstUseOf(deviceId, rows);
    }
    void firstUseOf(uint32_t deviceId, RowSink& rows);
    void decodeDevice(const CUpti_Activity* record, RowSink& rows);
    void decodeCudaEvent(const CUpti_Activity* record, const DecodeContext& context, RowSink& rows);
    void decodeName(const CUpti_Activity* record, const DecodeContext& context, RowSink& rows);
    void writeGpu(const KnownGpu& gpu, RowSink& rows);

    ApiNameFn apiNameFn_;
    KernelNameCache kernelNames_;
    std::unordered_map<uint64_t, std::string> apiNames_;
    std::unordered_map<uint32_t, uint32_t> contextDevice_;
    std::unordered_map<uint32_t, OpenRange> openRanges_;
    std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> markerStyle_;  // id -> color, category
    std::map<uint32_t, KnownGpu> gpus_;
    std::vector<bool> usedDevices_;     // by deviceId, in this capture
    std::vector<uint32_t> ownThreads_;  // one or two
    uint64_t noTimestamp_ = 0, overheadNs_ = 0;
};

}  // namespace osc::agent::cupti

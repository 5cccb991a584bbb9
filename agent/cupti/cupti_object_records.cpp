// Records that describe objects rather than time activity: DEVICE (GPU
// descriptions), CUDA_EVENT (which stream recorded an event) and NAME (NVTX
// resource names).
#include "agent/cupti/cupti_decoder.h"
#include "agent/cupti/cupti_records.h"
#include "agent/cupti/driver_info.h"
#include "analyzer/capture/schema.h"

namespace osc::agent::cupti {
namespace {

// A template so that the fields only CUDA 13's struct has are looked for
// without breaking the build against CUDA 12 headers.
template <typename Record>
CudaEventRow cudaEventRowOf(const Record& r, const DecodeContext& c) {
    CudaEventRow e;
    e.contextId = r.contextId;
    e.streamId = r.streamId;
    e.correlationId = r.correlationId;
    e.eventId = r.eventId;
    e.globalPid = c.globalPid;
    if constexpr (requires { r.deviceId; }) e.deviceId = r.deviceId;
    if constexpr (requires { r.deviceTimestamp; }) {
        // 0: not collected (device timestamps off, or unsupported).
        if (r.deviceTimestamp != 0) e.deviceTimestamp = static_cast<TimeNs>(r.deviceTimestamp) - c.sourceOriginNs;
    }
    if constexpr (requires { r.cudaEventSyncId; }) e.cudaEventSyncId = r.cudaEventSyncId;
    return e;
}

}  // namespace

void CuptiDecoder::writeGpu(const KnownGpu& gpu, RowSink& rows) {
    if (gpu.record && gpu.driver)
        rows.addGpu(mergeGpuInfo(*gpu.record, *gpu.driver));
    else
        rows.addGpu(gpu.record ? *gpu.record : *gpu.driver);
}

void CuptiDecoder::addDriverGpu(const GpuInfo& gpu, RowSink& rows) {
    KnownGpu& known = gpus_[gpu.id];
    known.driver = gpu;
    if (isUsed(gpu.id)) writeGpu(known, rows);  // the writer replaces the GPU's earlier row
}

void CuptiDecoder::firstUseOf(uint32_t deviceId, RowSink& rows) {
    // Ordinals are small; anything else is no GPU worth a row.
    constexpr uint32_t kMaxDevices = 1024;
    if (deviceId >= kMaxDevices) return;
    if (usedDevices_.size() <= deviceId) usedDevices_.resize(deviceId + 1);
    usedDevices_[deviceId] = true;
    if (auto it = gpus_.find(deviceId); it != gpus_.end()) writeGpu(it->second, rows);
}

void CuptiDecoder::decodeDevice(const CUpti_Activity* record, RowSink& rows) {
    const auto* r = reinterpret_cast<const DeviceRecord*>(record);
    // A device hidden by CUDA_VISIBLE_DEVICES has no ordinal in this process,
    // so its id would name some other, visible device.
    if (!r->isCudaVisible) return;
    GpuInfo g;
    g.id = r->id;
    g.name = r->name ? r->name : "";
    g.uuid = gpuUuidText(r->uuid);
    g.totalMemory = r->globalMemorySize;
    g.smCount = static_cast<int>(r->numMultiprocessors);
    g.computeMajor = static_cast<int>(r->computeCapabilityMajor);
    g.computeMinor = static_cast<int>(r->computeCapabilityMinor);
    const uint32_t id = g.id;
    KnownGpu& known = gpus_[id];
    known.record = std::move(g);
    if (isUsed(id)) writeGpu(known, rows);
}

void CuptiDecoder::decodeCudaEvent(const CUpti_Activity* record, const DecodeContext& c, RowSink& rows) {
    CudaEventRow e = cudaEventRowOf(*reinterpret_cast<const CudaEventRecord*>(record), c);
    if (e.deviceId == kNoId)
        e.deviceId = deviceOfContext(e.contextId);
    else
        contextDevice_[e.contextId] = e.deviceId;
    rows.addCudaEvent(e);
}

void CuptiDecoder::decodeName(const CUpti_Activity* record, const DecodeContext& c, RowSink& rows) {
    const auto* r = reinterpret_cast<const NameRecord*>(record);
    if (!r->name || !*r->name) return;
    const auto& id = r->objectId;
    ObjectNameRow o;
    o.globalPid = c.globalPid;
    o.name = r->name;
    switch (r->objectKind) {
        case CUPTI_ACTIVITY_OBJECT_STREAM:
            rows.addStreamName(c.globalPid, id.dcs.deviceId, id.dcs.streamId, r->name);
            return;
        case CUPTI_ACTIVITY_OBJECT_THREAD: {
            const int64_t pid = id.pt.processId ? id.pt.processId : c.pid;
            rows.addThreadName(schema::packGlobalTid(pid, id.pt.threadId), r->name);
            return;
        }
        case CUPTI_ACTIVITY_OBJECT_PROCESS:
            o.kind = NamedObject::Process;
            if (id.pt.processId) o.globalPid = schema::packGlobalPid(id.pt.processId);
            break;
        case CUPTI_ACTIVITY_OBJECT_DEVICE:
            o.kind = NamedObject::Device;
            o.deviceId = id.dcs.deviceId;
            break;
        case CUPTI_ACTIVITY_OBJECT_CONTEXT:
            o.kind = NamedObject::Context;
            o.deviceId = id.dcs.deviceId;
            o.contextId = id.dcs.contextId;
            break;
        default:
            return;  // CUPTI names no other kind
    }
    rows.addObjectName(o);
}

}  // namespace osc::agent::cupti

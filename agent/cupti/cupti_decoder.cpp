#include "agent/cupti/cupti_decoder.h"

#include "agent/cupti/cupti_records.h"
#include "analyzer/capture/schema.h"

namespace osc::agent::cupti {
namespace {

TimeNs rel(uint64_t t, const DecodeContext& c) { return static_cast<TimeNs>(t) - c.sourceOriginNs; }

CopyKind copyKindOf(uint8_t k) { return k <= 10 ? static_cast<CopyKind>(k) : CopyKind::Unknown; }
MemKind memKindOf(uint8_t k) { return k <= 7 ? static_cast<MemKind>(k) : MemKind::Unknown; }
SyncType syncTypeOf(uint32_t t) { return t <= 4 ? static_cast<SyncType>(t) : SyncType::Unknown; }

// Memcpy and MemcpyPtoP records share these fields; peer copies add devices.
template <typename Record>
CopyRow copyRowOf(const Record& r, const DecodeContext& c) {
    CopyRow m;
    m.start = rel(r.start, c);
    m.end = rel(r.end, c);
    m.deviceId = r.deviceId;
    m.contextId = r.contextId;
    m.streamId = r.streamId;
    m.correlationId = r.correlationId;
    m.globalPid = c.globalPid;
    m.bytes = r.bytes;
    m.copyKind = copyKindOf(r.copyKind);
    m.srcKind = memKindOf(r.srcKind);
    m.dstKind = memKindOf(r.dstKind);
    return m;
}

}  // namespace

CuptiDecoder::CuptiDecoder(ApiNameFn apiName) : apiNameFn_(std::move(apiName)) {}

void CuptiDecoder::reset() {
    openRanges_.clear();
    markerStyle_.clear();
    gpus_.clear();
    usedDevices_.clear();
    ownThreads_.clear();
    noTimestamp_ = 0;
    overheadNs_ = 0;
}

std::string_view CuptiDecoder::apiName(ApiKind kind, uint32_t cbid) {
    const uint64_t key = (static_cast<uint64_t>(kind) << 32) | cbid;
    auto it = apiNames_.find(key);
    if (it != apiNames_.end()) return it->second;
    std::string name = apiNameFn_ ? apiNameFn_(kind, cbid) : std::string();
    if (name.empty()) name = (kind == ApiKind::Runtime ? "cudaRuntimeApi#" : "cuDriverApi#") + std::to_string(cbid);
    return apiNames_.emplace(key, std::move(name)).first->second;
}

uint32_t CuptiDecoder::deviceOfContext(uint32_t contextId) const {
    auto it = contextDevice_.find(contextId);
    return it == contextDevice_.end() ? 0 : it->second;
}

bool CuptiDecoder::isOwnThread(uint32_t threadId) const {
    for (uint32_t t : ownThreads_)
        if (t == threadId) return true;
    return false;
}

void CuptiDecoder::decode(const CUpti_Activity* record, const DecodeContext& c, RowSink& rows) {
    switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const auto* r = reinterpret_cast<const KernelRecord*>(record);
            if (r->start == 0 && r->end == 0) {
                ++noTimestamp_;
                return;
            }
            contextDevice_[r->contextId] = r->deviceId;
            useDevice(r->deviceId, rows);
            const auto& names = kernelNames_.lookup(r->name ? r->name : "<unknown>");
            KernelRow k;
            k.start = rel(r->start, c);
            k.end = rel(r->end, c);
            k.deviceId = r->deviceId;
            k.contextId = r->contextId;
            k.streamId = r->streamId;
            k.correlationId = r->correlationId;
            k.globalPid = c.globalPid;
            setKernelNames(k, names, rows);
            k.gridX = static_cast<uint32_t>(r->gridX);
            k.gridY = static_cast<uint32_t>(r->gridY);
            k.gridZ = static_cast<uint32_t>(r->gridZ);
            k.blockX = static_cast<uint32_t>(r->blockX);
            k.blockY = static_cast<uint32_t>(r->blockY);
            k.blockZ = static_cast<uint32_t>(r->blockZ);
            k.registersPerThread = r->registersPerThread;
            k.staticSharedMemory = static_cast<uint32_t>(r->staticSharedMemory);
            k.dynamicSharedMemory = static_cast<uint32_t>(r->dynamicSharedMemory);
            k.graphId = r->graphId;
            k.graphNodeId = r->graphNodeId;
            rows.addKernel(k);
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const auto* r = reinterpret_cast<const MemcpyRecord*>(record);
            if (r->start == 0 && r->end == 0) {
                ++noTimestamp_;
                return;
            }
            contextDevice_[r->contextId] = r->deviceId;
            useDevice(r->deviceId, rows);
            rows.addCopy(copyRowOf(*r, c));
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            const auto* r = reinterpret_cast<const MemcpyPtoPRecord*>(record);
            if (r->start == 0 && r->end == 0) {
                ++noTimestamp_;
                return;
            }
            contextDevice_[r->contextId] = r->deviceId;
            useDevice(r->deviceId, rows);
            CopyRow m = copyRowOf(*r, c);
            m.srcDeviceId = r->srcDeviceId;
            m.dstDeviceId = r->dstDeviceId;
            rows.addCopy(m);
            return;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const auto* r = reinterpret_cast<const MemsetRecord*>(record);
            if (r->start == 0 && r->end == 0) {
                ++noTimestamp_;
                return;
            }
            contextDevice_[r->contextId] = r->deviceId;
            useDevice(r->deviceId, rows);
            MemsetRow m;
            m.start = rel(r->start, c);
            m.end = rel(r->end, c);
            m.deviceId = r->deviceId;
            m.contextId = r->contextId;
            m.streamId = r->streamId;
            m.correlationId = r->correlationId;
            m.globalPid = c.globalPid;
            m.value = r->value;
            m.bytes = r->bytes;
            rows.addMemset(m);
            return;
        }
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
            const auto* r = reinterpret_cast<const SyncRecord*>(record);
            if (r->start == 0 && r->end == 0) {
                ++noTimestamp_;
                return;
            }
            SyncRow s;
            s.start = rel(r->start, c);
            s.end = rel(r->end, c);
            s.deviceId = deviceOfContext(r->contextId);
            s.contextId = r->contextId;
            s.streamId = r->streamId;
            s.correlationId = r->correlationId;
            s.globalPid = c.globalPid;
            s.syncType = syncTypeOf(static_cast<uint32_t>(r->type));
            s.eventId = r->cudaEventId;
            rows.addSync(s);
            return;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
            const auto* r = reinterpret_cast<const ApiRecord*>(record);
            if (isOwnThread(r->threadId)) return;
            const ApiKind kind = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? ApiKind::Runtime : ApiKind::Driver;
            ApiCallRow a;
            a.start = rel(r->start, c);
            a.end = rel(r->end, c);
            a.kind = kind;
            a.globalTid = schema::packGlobalTid(r->processId, r->threadId);
            a.correlationId = r->correlationId;
            a.name = apiName(kind, r->cbid);
            a.returnValue = static_cast<int32_t>(r->returnValue);
            rows.addApiCall(a);
            return;
        }
        case CUPTI_ACTIVITY_KIND_MARKER: {
            const auto* r = reinterpret_cast<const MarkerRecord*>(record);
            const uint64_t tid = r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD
                                     ? schema::packGlobalTid(r->objectId.pt.processId, r->objectId.pt.threadId)
                                     : c.globalPid;
            if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
                OpenRange o;
                o.start = rel(r->timestamp, c);
                o.text = r->name ? r->name : "";
                o.domain = r->domain ? r->domain : "";
                o.globalTid = tid;
                if (auto s = markerStyle_.find(r->id); s != markerStyle_.end()) {
                    o.color = s->second.first;
                    o.category = s->second.second;
                }
                openRanges_[r->id] = std::move(o);
            } else if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
                auto it = openRanges_.find(r->id);
                if (it == openRanges_.end()) return;  // START fell before the capture
                const OpenRange& o = it->second;
                RangeRow g;
                g.start = o.start;
                g.end = rel(r->timestamp, c);
                // CUPTI does not say push/pop or start/end; a range ended on
                // another thread can only be start/end.
                g.kind = tid == o.globalTid ? RangeKind::PushPop : RangeKind::StartEnd;
                g.text = o.text;
                g.domain = o.domain;
                g.globalTid = o.globalTid;
                g.endGlobalTid = tid;
                auto s = markerStyle_.find(r->id);
                g.color = s != markerStyle_.end() ? s->second.first : o.color;
                g.category = s != markerStyle_.end() ? s->second.second : o.category;
                rows.addRange(g);
                openRanges_.erase(it);
                markerStyle_.erase(r->id);
            } else if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
                RangeRow g;
                g.start = rel(r->timestamp, c);
                g.end = -1;
                g.kind = RangeKind::Mark;
                g.text = r->name ? r->name : "";
                g.domain = r->domain ? r->domain : "";
                g.globalTid = g.endGlobalTid = tid;
                rows.addRange(g);
            }
            return;
        }
        case CUPTI_ACTIVITY_KIND_MARKER_DATA: {
            const auto* r = reinterpret_cast<const MarkerDataRecord*>(record);
            const uint32_t color = (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) ? r->color : 0;
            markerStyle_[r->id] = {color, r->category};
            return;
        }
        case CUPTI_ACTIVITY_KIND_OVERHEAD: {
            const auto* r = reinterpret_cast<const OverheadRecord*>(record);
            if (r->end > r->start) overheadNs_ += r->end - r->start;
            return;
        }
        case CUPTI_ACTIVITY_KIND_DEVICE:
            decodeDevice(record, rows);
            return;
        case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
            decodeCudaEvent(record, c, rows);
            return;
        case CUPTI_ACTIVITY_KIND_NAME:
            decodeName(record, c, rows);
            return;
        default:
            return;  // kinds we did not enable
    }
}

}  // namespace osc::agent::cupti

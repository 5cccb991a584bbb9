#include "agent/cupti/cupti_source.h"

#include "agent/core/capture_session.h"
#include "agent/core/process_identity.h"
#include "agent/cupti/driver_info.h"
#include "analyzer/capture/schema.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace osc::agent::cupti {
namespace {

// CUPTI's buffer callbacks are plain functions: they reach the source through
// this pointer, set from its first start until it is destroyed (buffers CUPTI
// hands back after a stop still go back to the pool through it).
std::atomic<CuptiActivitySource*> g_active{nullptr};

// CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER takes a uint8_t.
constexpr uint8_t kBuffersComeZeroed = 1;
static_assert(sizeof(kBuffersComeZeroed) == 1);

std::string resultText(CUptiResult r) {
    const char* text = nullptr;
    if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) return "CUPTI error " + std::to_string(r);
    return text;
}

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_CUDA_EVENT,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_MARKER_DATA,
    CUPTI_ACTIVITY_KIND_NAME,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};
// What the application does, as opposed to what the GPU does: off at the
// stop instant of a capture stopped by request, while the GPU kinds stay on
// for the stop grace.
constexpr CUpti_ActivityKind kApplicationKinds[] = {
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_MARKER_DATA,
};
// Enabled with cuptiActivityEnableAndDump, which also re-emits the records
// of devices that existed before the capture. They reach us only if CUPTI
// was attached before cuInit; the driver query (driver_info.h) covers the
// other cases.
constexpr CUpti_ActivityKind kDumpedKinds[] = {CUPTI_ACTIVITY_KIND_DEVICE};

std::string apiCallbackName(ApiKind kind, uint32_t cbid) {
    const char* name = nullptr;
    const auto domain = kind == ApiKind::Runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return {};
    return name;
}

}  // namespace

CuptiActivitySource::CuptiActivitySource() : decoder_(&apiCallbackName) {
    if (const char* dir = std::getenv("OVERLAPSCOPE_CUPTI_RECORD"); dir && *dir)
        recorder_ = std::make_unique<CuptiRecorder>(dir, &apiCallbackName);
}

CuptiActivitySource::~CuptiActivitySource() {
    stop();
    CuptiActivitySource* self = this;
    g_active.compare_exchange_strong(self, nullptr);
}

bool CuptiActivitySource::start(BufferSink& sink, std::string& error) {
    if (cuptiGetVersion(&runtimeVersion_) != CUPTI_SUCCESS) runtimeVersion_ = 0;
    // Holding the subscription only while capturing leaves CUPTI free for
    // other tools (torch.profiler) between captures.
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "overlapscope";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = sizeof(holder) - 1;
    // No callback domain is enabled until a stop grace (onApiEnter).
    CUptiResult r = cuptiSubscribe_v2(&subscriber_, onApiEnter, this, &params);
    if (r != CUPTI_SUCCESS) {
        subscriber_ = nullptr;
        error = "CUPTI: " + resultText(r);
        if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
            error += holder[0] ? std::string(" (held by ") + holder + ")" : " (another profiler holds CUPTI)";
        else
            error += " (no GPU or CUDA driver in this process?)";
        return false;
    }
    {
        std::lock_guard lock(sinkMutex_);
        sink_ = &sink;
    }
    g_active = this;
    running_ = true;
    firstAfterStop_ = 0;
    decoder_.reset();
    // Our pool zeroes buffers on the writer thread, so CUPTI need not do it
    // on the app's. Where CUPTI refuses, it zeroes them itself (slower, same records).
    uint8_t zeroed = kBuffersComeZeroed;
    size_t attrSize = sizeof(zeroed);
    const CUptiResult zr =
        cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &attrSize, &zeroed);
    zeroedBuffers_ = zr == CUPTI_SUCCESS ? "agent" : "cupti (" + resultText(zr) + ")";
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    r = cuptiActivityRegisterCallbacks(onBufferRequested, onBufferCompleted);
    if (r != CUPTI_SUCCESS) {
        error = "CUPTI: cannot register buffer callbacks: " + resultText(r);
        stop();
        return false;
    }
    enableKinds();
    if (enabled_.empty() || enabled_.front() != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        error = "CUPTI: cannot enable kernel activity (" + failedKinds_ + ")";
        stop();
        return false;
    }
    return true;
}

void CuptiActivitySource::enableKinds() {
    enabled_.clear();
    failedKinds_.clear();
    auto note = [&](CUpti_ActivityKind kind, CUptiResult r) {
        if (r == CUPTI_SUCCESS) {
            enabled_.push_back(kind);
        } else {
            if (!failedKinds_.empty()) failedKinds_ += ", ";
            failedKinds_ += "kind " + std::to_string(kind) + ": " + resultText(r);
        }
    };
    for (CUpti_ActivityKind kind : kKinds) note(kind, cuptiActivityEnable(kind));
    for (CUpti_ActivityKind kind : kDumpedKinds) note(kind, cuptiActivityEnableAndDump(kind));
#if CUPTI_API_VERSION >= 130000
    // Where on the GPU timeline each event record completed; off by default.
    eventTimestamps_ = cuptiActivityEnableCudaEventDeviceTimestamps(1) == CUPTI_SUCCESS;
#endif
}

void CuptiActivitySource::disableKinds() {
    for (CUpti_ActivityKind kind : enabled_) cuptiActivityDisable(kind);
    enabled_.clear();
#if CUPTI_API_VERSION >= 130000
    // CUPTI is left as we found it for other tools between captures.
    if (eventTimestamps_) cuptiActivityEnableCudaEventDeviceTimestamps(0);
#endif
    eventTimestamps_ = false;
}

bool CuptiActivitySource::stopRecordingLaunches() {
    if (!subscriber_) return false;
    for (CUpti_ActivityKind kind : kApplicationKinds) {
        auto it = std::find(enabled_.begin(), enabled_.end(), kind);
        if (it == enabled_.end()) continue;
        cuptiActivityDisable(kind);
        enabled_.erase(it);
    }
    // Watched only once those kinds are off: a call entering in between is
    // neither recorded nor left out (a kernel without its launch, harmless);
    // the GPU records of any call entering later are left out by its id.
    watchApiEntries(true);
    return true;
}

void CuptiActivitySource::watchApiEntries(bool on) {
    if (on == watchingApiEntries_) return;
    bool ok = true;
    for (CUpti_CallbackDomain d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API})
        ok = cuptiEnableDomain(on ? 1 : 0, subscriber_, d) == CUPTI_SUCCESS && ok;
    // Without the callbacks nothing is left out: a few GPU records of work
    // launched during the grace may then be in the file.
    watchingApiEntries_ = on;
    if (on && !ok) std::fprintf(stderr, "overlapscope-agent: CUPTI: cannot watch API calls during the stop grace\n");
}

void CUPTIAPI CuptiActivitySource::onApiEnter(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId,
                                              const void* data) {
    // `self` is what we subscribed with: followed only if it is the live source.
    if (!self || self != g_active.load() || !data) return;
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    if (call->callbackSite != CUPTI_API_ENTER || call->correlationId == 0) return;
    // The lowest id seen: calls racing on several threads may arrive out of order.
    auto& first = static_cast<CuptiActivitySource*>(self)->firstAfterStop_;
    uint32_t seen = first.load();
    while ((seen == 0 || call->correlationId < seen) && !first.compare_exchange_weak(seen, call->correlationId)) {}
}

void CuptiActivitySource::stop() {
    if (!subscriber_) return;
    running_ = false;  // no more buffers lent
    watchApiEntries(false);
    disableKinds();
    // Forced: also hands back buffers holding incomplete records. What CUPTI
    // hands back later still reaches the pool (sink_ stays), which takes it
    // back without writing it.
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cuptiUnsubscribe(subscriber_);
    subscriber_ = nullptr;
}

void CuptiActivitySource::flush() {
    if (subscriber_) cuptiActivityFlushAll(0);
}

void CuptiActivitySource::decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context,
                                 RowSink& rows) {
    if (recorder_) {
        recordAndDecode(buffer, validBytes, context, rows);
        return;
    }
    describeGpus(rows);
    CUpti_Activity* record = nullptr;
    auto* data = const_cast<uint8_t*>(buffer);
    while (cuptiActivityGetNextRecord(data, validBytes, &record) == CUPTI_SUCCESS)
        decoder_.decode(record, context, rows);
}

void CuptiActivitySource::recordAndDecode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context,
                                          RowSink& rows) {
    if (!recorder_->begunFor(rows.serial())) {
        recording::Manifest m;
        m.who = currentProcessIdentity();
        m.metadata = metadata();
        recorder_->begin(rows.serial(), context, std::move(m));
    }
    describeGpus(rows);
    records_.clear();
    CUpti_Activity* record = nullptr;
    auto* data = const_cast<uint8_t*>(buffer);
    while (cuptiActivityGetNextRecord(data, validBytes, &record) == CUPTI_SUCCESS) records_.push_back(record);
    recorder_->buffer(buffer, validBytes, records_);
    for (const CUpti_Activity* r : records_) decoder_.decode(r, context, rows);
}

void CuptiActivitySource::describeGpus(RowSink& rows) {
    if (gpusDescribedIn_ == rows.serial()) return;
    if (!driverGpus_) {
        // On the writer thread, where nothing else calls CUDA: CUPTI records
        // these calls too, and the decoder must know they are ours.
        const auto self = static_cast<uint32_t>(::syscall(SYS_gettid));
        decoder_.ignoreApiCallsOf(self);
        if (recorder_) recorder_->ownThread(self);
        const auto devices = queryDriverDevices();
        if (!devices) return;  // the driver is still initialising: next buffer
        driverGpus_.emplace();
        for (const DriverDevice& d : *devices) driverGpus_->push_back(gpuInfoOf(d));
    }
    for (const GpuInfo& g : *driverGpus_) decoder_.addDriverGpu(g, rows);
    if (recorder_) recorder_->gpus(*driverGpus_);
    gpusDescribedIn_ = rows.serial();
}

int64_t CuptiActivitySource::timestampNs() const {
    uint64_t t = 0;
    if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS) return realtimeNs();
    return static_cast<int64_t>(t);
}

std::map<std::string, std::string> CuptiActivitySource::metadata() const {
    // The session writes its start metadata before start() has run, so ask
    // here too (the H100 captures said cupti_version 0 without this).
    uint32_t cuptiVersion = runtimeVersion_;
    if (cuptiVersion == 0 && cuptiGetVersion(&cuptiVersion) != CUPTI_SUCCESS) cuptiVersion = 0;
    std::map<std::string, std::string> m{
        {"cupti_api_version_compiled", std::to_string(CUPTI_API_VERSION)},
        {std::string(schema::meta::kCuptiVersion), std::to_string(cuptiVersion)},
        {"cupti_clock", "CLOCK_REALTIME (CUPTI default)"},
    };
    if (!failedKinds_.empty()) m["cupti_kinds_not_enabled"] = failedKinds_;
    if (!zeroedBuffers_.empty()) m["cupti_buffers_zeroed_by"] = zeroedBuffers_;
    // cuDriverGetVersion: the newest CUDA the driver supports, not its
    // release number. It needs no initialisation, so it is fine here, where
    // we may be inside cuInit (a capture started from InitializeInjection);
    // the device queries wait for the writer thread.
    if (const auto version = queryDriverVersion()) {
        m[std::string(schema::meta::kDriverVersion)] = std::to_string(*version);
        m["driver_version_text"] = cudaVersionText(*version);
    }
    return m;
}

void CUPTIAPI CuptiActivitySource::onBufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    if (!buffer || !size || !maxNumRecords) return;
    *maxNumRecords = 0;
    *buffer = nullptr;
    *size = 0;
    CuptiActivitySource* self = g_active.load();
    if (!self) return;
    std::lock_guard lock(self->sinkMutex_);
    // nullptr when the pool is exhausted: CUPTI then drops records and counts them.
    try {
        if (self->sink_ && self->running_) *buffer = self->sink_->requestBuffer(size);
    } catch (...) {
        *buffer = nullptr;  // nothing may unwind into CUPTI
    }
}

void CUPTIAPI CuptiActivitySource::onBufferCompleted(CUcontext context, uint32_t streamId, uint8_t* buffer, size_t,
                                                     size_t validSize) {
    CuptiActivitySource* self = g_active.load();
    // Read before taking our lock: CUPTI holds its own lock inside this call.
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, streamId, &dropped) == CUPTI_SUCCESS && self)
        self->dropped_.fetch_add(dropped);
    if (!self || !buffer) return;
    std::lock_guard lock(self->sinkMutex_);
    // The pool checks that it lent this buffer (and takes it back without
    // writing it once its capture has ended).
    try {
        if (self->sink_) self->sink_->bufferCompleted(buffer, validSize);
    } catch (...) {
        // Out of memory queueing it: the buffer is lost, the process is not.
    }
}

}  // namespace osc::agent::cupti

#include "agent/fake/fake_source.h"

#include "agent/core/capture_session.h"
#include "analyzer/capture/background_thread.h"

#include <pthread.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace osc::agent {
namespace {

const char* const kNames[] = {
    "_Z13gemm_bf16_tn_PfS_S_i",  // mangled: exercises demangling
    "_ZN2at6native29vectorized_elementwise_kernelILi4EfEEviT0_",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs4K)",
    "layer_norm_fwd",
    "ProfilerStep#",  // NVTX step ranges
    "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
};
constexpr uint32_t kGemm = 0, kElementwise = 1, kNccl = 2, kLayerNorm = 3, kStep = 4, kSendRecv = 5;

}  // namespace

const char* const* fakeKernelNames(size_t* count) {
    *count = sizeof(kNames) / sizeof(kNames[0]);
    return kNames;
}

FakeActivitySource::FakeActivitySource(FakeSourceOptions options) : options_(options) {}

FakeActivitySource::~FakeActivitySource() { stop(); }

FakeSourceOptions FakeActivitySource::optionsFromEnvironment() {
    FakeSourceOptions o;
    if (const char* v = std::getenv("OVERLAPSCOPE_FAKE_RATE"); v && *v) {
        char* end = nullptr;
        const double r = std::strtod(v, &end);
        if (*end == '\0' && r >= 0) o.recordsPerSecond = r;
    }
    if (const char* v = std::getenv("OVERLAPSCOPE_FAKE_SENDRECV"); v && *v) {
        long long first = 0, period = 0, duration = 0;
        int count = 0;
        if (std::sscanf(v, "%lld,%d,%lld,%lld", &first, &count, &period, &duration) == 4 && count > 0 && period >= 0 &&
            duration > 0)
            o.sendRecv = {first, period, duration, count};
    }
    if (const char* v = std::getenv("OVERLAPSCOPE_FAKE_GPU_LATENCY_MS"); v && *v) {
        char* end = nullptr;
        const double ms = std::strtod(v, &end);
        if (*end == '\0' && ms >= 0 && ms <= 60000) o.gpuLatencyNs = static_cast<int64_t>(ms * 1e6);
    }
    const auto number = [](const char* name, double lo, double hi, double& out) {
        const char* v = std::getenv(name);
        if (!v || !*v) return false;
        char* end = nullptr;
        const double x = std::strtod(v, &end);
        if (*end != '\0' || !(x >= lo && x <= hi)) return false;
        out = x;
        return true;
    };
    double x = 0;
    if (number("OVERLAPSCOPE_FAKE_STEP_MS", 1, 60000, x)) o.paced.stepNs = static_cast<int64_t>(x * 1e6);
    if (number("OVERLAPSCOPE_FAKE_KERNELS", 1, 100000, x)) o.paced.computeKernels = static_cast<int>(x);
    if (number("OVERLAPSCOPE_FAKE_DEVICES", 1, 16, x)) o.paced.devices = static_cast<int>(x);
    if (number("OVERLAPSCOPE_FAKE_DEVICE_SKEW_MS", 0, 60000, x)) o.paced.deviceSkewNs = static_cast<int64_t>(x * 1e6);
    if (number("OVERLAPSCOPE_FAKE_NCCL_BYTES", 0, 1e15, x)) o.paced.collectiveBytes = static_cast<uint64_t>(x);
    if (number("RANK", 0, 1 << 30, x)) o.paced.rank = static_cast<int>(x);
    if (number("WORLD_SIZE", 1, 1 << 20, x)) o.paced.ranks = static_cast<int>(x) * o.paced.devices;
    if (number("OVERLAPSCOPE_FAKE_STALL_RANK", 0, 1 << 30, x)) o.paced.stallRank = static_cast<int>(x);
    if (number("OVERLAPSCOPE_FAKE_STALL_AT_NS", 1, 9e18, x)) o.paced.stallAtNs = static_cast<int64_t>(x);
    if (number("OVERLAPSCOPE_FAKE_WAKE_MS", 0, 1000, x)) o.wakeNs = static_cast<int64_t>(x * 1e6);
    if (number("OVERLAPSCOPE_FAKE_STOP_MS", 0, 60000, x)) o.stopNs = static_cast<int64_t>(x * 1e6);
    return o;
}

bool FakeActivitySource::start(BufferSink& sink, std::string& error) {
    if (const char* v = std::getenv("OVERLAPSCOPE_FAKE_FAIL"); v && *v) {
        error = std::string("fake source refused to start: ") + v;
        return false;
    }
    sink_ = &sink;
    running_ = true;
    finished_ = false;
    {
        std::lock_guard lock(launchMutex_);
        recording_ = true;
        correlation_ = 1;
        inFlight_.clear();  // the last capture's GPU work ended with its stop()
        openRows_.clear();
    }
    firstAfterStop_ = 0;
    launches_ = inFlightAtStop_ = kernelsAfterStop_ = 0;
    thread_ = startBackgroundThread([this] { produce(); });
    return true;
}

void FakeActivitySource::stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
    // A real GPU's last records take a while to arrive (CUPTI flushes them
    // at unsubscribe); tests stretch that to widen races around a stop.
    if (options_.stopNs > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(options_.stopNs));
    completeCurrent();
    sink_ = nullptr;
}

void FakeActivitySource::flush() {
    // Like cuptiActivityFlushAll: the partly filled buffer is handed over
    // before the call returns.
    completeCurrent();
}

int64_t FakeActivitySource::timestampNs() const { return realtimeNs(); }

std::map<std::string, std::string> FakeActivitySource::metadata() const {
    std::map<std::string, std::string> m{{"fake_records_per_second", std::to_string(options_.recordsPerSecond)}};
    if (options_.metadataPaddingBytes > 0) m["fake_padding"] = std::string(options_.metadataPaddingBytes, 'p');
    return m;
}

void FakeActivitySource::completeCurrent() {
    std::lock_guard lock(bufferMutex_);
    if (current_ && sink_) sink_->bufferCompleted(current_, currentUsed_);
    current_ = nullptr;
    currentUsed_ = 0;
}

bool FakeActivitySource::emit(const FakeRecord& record) {
    std::unique_lock lock(bufferMutex_);
    for (;;) {
        if (current_ && currentUsed_ + sizeof(FakeRecord) > currentSize_) {
            sink_->bufferCompleted(current_, currentUsed_);
            current_ = nullptr;
        }
        if (!current_) {
            current_ = sink_->requestBuffer(&currentSize_);
            currentUsed_ = 0;
        }
        if (current_) break;
        if (!options_.waitForBuffers || !running_) {
            dropped_.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        lock.lock();
    }
    std::memcpy(current_ + currentUsed_, &record, sizeof(record));
    currentUsed_ += sizeof(record);
    return true;
}

// A training loop in miniature: per step, a GEMM on the compute stream with an
// all-reduce on the communication stream that overlaps its second half, then
// an elementwise kernel, all inside a "ProfilerStep#N" range.
void FakeActivitySource::produce() {
    ::pthread_setname_np(::pthread_self(), "osc-fake-gpu");
    if (options_.paced.stepNs > 0) {
        producePaced();
        finished_ = true;
        return;
    }
    using clock = std::chrono::steady_clock;
    const auto begin = clock::now();
    uint64_t count = 0, step = 0;
    emitSendRecvKernels();
    while (running_) {
        if (options_.gpuLatencyNs > 0) finishDueKernels();
        if (options_.maxRecords && count >= options_.maxRecords) {
            if (options_.gpuLatencyNs <= 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the GPU runs on
            continue;
        }
        if (options_.recordsPerSecond > 0) {
            const double due = std::chrono::duration<double>(clock::now() - begin).count() * options_.recordsPerSecond;
            if (static_cast<double>(count) >= due) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                continue;
            }
        }
        const int64_t t0 = realtimeNs();
        if (options_.gpuLatencyNs > 0)
            launchStep(t0, step);
        else
            emitStep(t0, step);
        count += 4;
        ++step;
    }
    // The last records are due now, not at the next flush: the benchmark
    // times how long the writer takes to catch up with them.
    if (options_.maxRecords && count >= options_.maxRecords) completeCurrent();
    finished_ = true;
}

void FakeActivitySource::emitStep(int64_t t0, uint64_t step) {
    if (!recording_.load(std::memory_order_relaxed)) return;  // every record of the plain loop is made at launch
    FakeRecord r;
    r.step = step;
    r.kind = FakeRecord::Range;
    r.nameIndex = kStep;
    r.start = t0;
    r.end = t0 + 90000;
    if (options_.kernelsOnly) {  // a fourth kernel in the range's place
        r.kind = FakeRecord::Kernel;
        r.nameIndex = kLayerNorm;
        r.streamId = 7;
        r.start = t0 + 81000;
        r.end = t0 + 89000;
        r.correlationId = nextCorrelation();
    }
    emit(r);
    FakeRecord k;
    k.kind = FakeRecord::Kernel;
    k.streamId = 7;
    k.grid[0] = 128;
    k.block[0] = 256;
    k.nameIndex = kGemm;
    k.start = t0 + 1000;
    k.end = t0 + 41000;
    k.correlationId = nextCorrelation();
    emit(k);
    FakeRecord n = k;
    n.nameIndex = kNccl;
    n.streamId = 13;
    n.start = t0 + 21000;
    n.end = t0 + 61000;
    n.correlationId = nextCorrelation();
    emit(n);
    FakeRecord e = k;
    e.nameIndex = (step % 2) ? kElementwise : kLayerNorm;
    e.start = t0 + 62000;
    e.end = t0 + 80000;
    e.correlationId = nextCorrelation();
    emit(e);
    produced_.fetch_add(4, std::memory_order_relaxed);
}

// The same step as the application sees it: a range and three launches
// (records now, while recording), their kernels queued on the GPU.
void FakeActivitySource::launchStep(int64_t t0, uint64_t step) {
    std::lock_guard lock(launchMutex_);
    if (recording_) {
        FakeRecord r;
        r.step = step;
        r.kind = FakeRecord::Range;
        r.nameIndex = kStep;
        r.start = t0;
        r.end = t0 + 9000;
        if (emit(r)) produced_.fetch_add(1, std::memory_order_relaxed);
    }
    const uint32_t kernels[3] = {kGemm, kNccl, (step % 2) ? kElementwise : kLayerNorm};
    for (int i = 0; i < 3; ++i) {
        const int64_t launchedAt = t0 + 1000 + 3000 * i;
        const uint32_t id = nextCorrelation();
        const uint64_t launch = launches_.fetch_add(1) + 1;
        if (recording_) {
            FakeRecord l;
            l.kind = FakeRecord::Launch;
            l.nameIndex = kernels[i];
            l.start = launchedAt;
            l.end = launchedAt + 2000;
            l.correlationId = id;
            if (emit(l)) produced_.fetch_add(1, std::memory_order_relaxed);
        }
        if (launch == options_.hangingLaunch) continue;  // never runs
        InFlight k;
        k.kernel.kind = FakeRecord::Kernel;
        k.kernel.nameIndex = kernels[i];
        k.kernel.streamId = kernels[i] == kNccl ? 13 : 7;
        k.kernel.grid[0] = 128;
        k.kernel.block[0] = 256;
        k.kernel.correlationId = id;
        k.finishesAtNs = launchedAt + options_.gpuLatencyNs;
        k.kernel.end = k.finishesAtNs;
        k.kernel.start = std::max(launchedAt, k.finishesAtNs - 20000);
        queueKernel(k.kernel, k.finishesAtNs);
    }
}

void FakeActivitySource::queueKernel(const FakeRecord& kernel, int64_t finishesAtNs, uint64_t seq,
                                     int64_t launchedAtNs) {
    InFlight k;
    k.kernel = kernel;
    k.finishesAtNs = finishesAtNs;
    k.seq = seq;
    k.launchedAtNs = launchedAtNs;
    const auto at = std::upper_bound(inFlight_.begin(), inFlight_.end(), finishesAtNs,
                                     [](int64_t t, const InFlight& f) { return t < f.finishesAtNs; });
    inFlight_.insert(at, k);
}

void FakeActivitySource::finishDueKernels() {
    std::vector<PendingCollective> rows;
    {
        std::lock_guard lock(launchMutex_);
        const int64_t now = realtimeNs();
        while (!inFlight_.empty() && inFlight_.front().finishesAtNs <= now) {
            const FakeRecord& k = inFlight_.front().kernel;
            const uint32_t firstAfter = firstAfterStop_.load();
            if (emit(k)) {
                produced_.fetch_add(1, std::memory_order_relaxed);
                if (firstAfter != 0 && k.correlationId >= firstAfter) kernelsAfterStop_.fetch_add(1);
            }
            // The NCCL plugin reports the all-reduce once its kernel channels stopped.
            if (k.nameIndex == kNccl && options_.paced.collectiveBytes > 0 && collectiveSink_)
                rows.push_back(collectiveRow(k, inFlight_.front().seq, inFlight_.front().launchedAtNs, k.end));
            inFlight_.pop_front();
        }
    }
    for (auto& c : rows) collectiveSink_(std::move(c));
}

PendingCollective FakeActivitySource::collectiveRow(const FakeRecord& k, uint64_t seq, int64_t launchedAtNs,
                                                    int64_t gpuEnd) const {
    const PacedTrainingOptions& o = options_.paced;
    PendingCollective c;
    c.func = "AllReduce";
    c.datatype = "ncclBfloat16";
    // One communicator over every device of every rank of the job.
    c.row.commHash = 0xFA4Eull;
    c.row.nranks = o.ranks;
    c.row.rank = static_cast<int32_t>((static_cast<int64_t>(o.rank) * std::max(1, o.devices) + k.deviceId) %
                                      std::max(1, o.ranks));
    c.row.seqNumber = seq;
    c.row.bytes = o.collectiveBytes;
    c.row.count = c.row.bytes / 2;
    c.row.nChannels = 2;
    c.row.deviceId = k.deviceId;
    c.row.enqueue = launchedAtNs > 0 ? launchedAtNs : k.start - 1000;
    c.row.gpuStart = k.start;
    c.row.gpuEnd = gpuEnd;
    return c;
}

std::vector<PendingCollective> FakeActivitySource::openCollectives() const {
    std::lock_guard lock(launchMutex_);
    return openRows_;
}

bool FakeActivitySource::waitUntil(int64_t realtimeNs_) {
    for (;;) {
        finishDueKernels();
        if (!running_) return false;
        const int64_t now = realtimeNs();
        if (now >= realtimeNs_) return true;
        const int64_t nap = std::max(std::min<int64_t>(realtimeNs_ - now, 2000000), options_.wakeNs);
        std::this_thread::sleep_for(std::chrono::nanoseconds(nap));
    }
}

// The paced loop (paced_training.h): each launch and step range is recorded
// when its moment comes, each kernel when the GPU has run it.
void FakeActivitySource::producePaced() {
    const PacedTrainingOptions& o = options_.paced;
    const int64_t p = o.stepNs;
    uint64_t n = static_cast<uint64_t>(realtimeNs() / p) + 1;  // the first whole step
    // The step ranges' numbers count on by one even where the loop skips a
    // slot, as a training loop's counter does: a rank that fell behind must
    // not jump to step numbers that the other ranks name differently.
    uint64_t number = n;
    const uint64_t stallSlot = o.stallAtNs > 0 ? static_cast<uint64_t>((o.stallAtNs + p - 1) / p) : UINT64_MAX;
    const bool stalledHere = o.rank == o.stallRank;
    const uint64_t perStep = static_cast<uint64_t>(std::max(0, o.commKernels));
    for (;;) {
        const PacedStep step = pacedStep(o, n);
        const bool stall = n >= stallSlot;
        for (const PacedKernel& k : step.kernels) {
            if (!waitUntil(k.launchNs)) return;
            // The stalled rank's host stops before it would enter the step's
            // first collective; it waits there until the job is stopped.
            if (stall && stalledHere && k.comm) {
                while (waitUntil(realtimeNs() + 50000000)) {}
                return;
            }
            std::lock_guard lock(launchMutex_);
            const uint32_t id = nextCorrelation();
            launches_.fetch_add(1);
            FakeRecord r;
            r.kind = FakeRecord::Kernel;
            r.nameIndex = k.comm ? kNccl : ((k.startNs / 1000) % 2 ? kElementwise : kGemm);
            r.deviceId = k.device;
            r.streamId = k.stream;
            r.grid[0] = 128;
            r.block[0] = 256;
            r.start = k.startNs;
            r.end = k.endNs;
            r.correlationId = id;
            if (recording_) {
                FakeRecord l;
                l.kind = FakeRecord::Launch;
                l.nameIndex = r.nameIndex;
                l.start = k.launchNs;
                l.end = k.launchNs + 2000;
                l.correlationId = id;
                if (emit(l)) produced_.fetch_add(1, std::memory_order_relaxed);
            }
            const uint64_t seq = number * perStep + static_cast<uint64_t>(k.commIndex);
            if (stall && k.comm) {
                // Waits for the stalled rank: it never completes.
                if (o.collectiveBytes > 0) openRows_.push_back(collectiveRow(r, seq, k.launchNs, -1));
                continue;
            }
            queueKernel(r, k.endNs, seq, k.launchNs);
        }
        if (!waitUntil(step.rangeEndNs)) return;
        {
            std::lock_guard lock(launchMutex_);
            if (recording_) {
                FakeRecord r;
                r.kind = FakeRecord::Range;
                r.nameIndex = kStep;
                r.step = number;
                r.start = step.rangeStartNs;
                r.end = step.rangeEndNs;
                if (emit(r)) produced_.fetch_add(1, std::memory_order_relaxed);
            }
        }
        if (stall) {
            // The host blocks at its next synchronisation; the GPU runs what it has.
            while (waitUntil(realtimeNs() + 50000000)) {}
            return;
        }
        ++n;
        ++number;
        // Fell more than a step behind (a loaded machine): on to the current slot.
        const uint64_t now = static_cast<uint64_t>(realtimeNs() / p);
        if (now > n) n = now + 1;
    }
}

bool FakeActivitySource::stopRecordingLaunches() {
    std::lock_guard lock(launchMutex_);
    if (!running_) return false;
    recording_ = false;
    firstAfterStop_ = correlation_.load();
    inFlightAtStop_ = inFlight_.size();
    return true;
}

void FakeActivitySource::emitSendRecvKernels() {
    std::lock_guard lock(launchMutex_);
    const FakeSourceOptions::Kernels& s = options_.sendRecv;
    for (int i = 0; i < s.count; ++i) {
        FakeRecord k;
        k.kind = FakeRecord::Kernel;
        k.nameIndex = kSendRecv;
        k.streamId = 13;
        k.grid[0] = 4;
        k.block[0] = 544;
        k.start = s.firstStartNs + i * s.periodNs;
        k.end = k.start + s.durationNs;
        k.correlationId = nextCorrelation();
        emit(k);
    }
}

void FakeActivitySource::decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context, RowSink& rows) {
    size_t count = 0;
    const char* const* names = fakeKernelNames(&count);
    const uint8_t* end = buffer + (validBytes / sizeof(FakeRecord)) * sizeof(FakeRecord);
    for (const uint8_t* p = buffer; p < end; p += sizeof(FakeRecord)) {
        FakeRecord r;
        std::memcpy(&r, p, sizeof(r));
        if (r.nameIndex >= count) continue;
        const TimeNs start = r.start - context.sourceOriginNs, stop = r.end - context.sourceOriginNs;
        switch (r.kind) {
            case FakeRecord::Kernel: {
                const auto& n = names_.lookup(names[r.nameIndex]);
                KernelRow k;
                k.start = start;
                k.end = stop;
                k.deviceId = r.deviceId;
                k.contextId = r.contextId;
                k.streamId = r.streamId;
                k.correlationId = r.correlationId;
                k.globalPid = context.globalPid;
                setKernelNames(k, n, rows);
                k.gridX = r.grid[0], k.gridY = r.grid[1], k.gridZ = r.grid[2];
                k.blockX = r.block[0], k.blockY = r.block[1], k.blockZ = r.block[2];
                rows.addKernel(k);
                break;
            }
            case FakeRecord::Copy: {
                CopyRow c;
                c.start = start;
                c.end = stop;
                c.deviceId = r.deviceId;
                c.streamId = r.streamId;
                c.correlationId = r.correlationId;
                c.globalPid = context.globalPid;
                c.bytes = r.bytes;
                c.copyKind = CopyKind::HtoD;
                rows.addCopy(c);
                break;
            }
            case FakeRecord::Launch: {
                ApiCallRow a;
                a.start = start;
                a.end = stop;
                a.kind = ApiKind::Runtime;
                a.globalTid = context.globalPid | 1;
                a.correlationId = r.correlationId;
                a.name = "cudaLaunchKernel_v7000";
                rows.addApiCall(a);
                break;
            }
            case FakeRecord::Range: {
                const std::string text = std::string(names[r.nameIndex]) + std::to_string(r.step);
                RangeRow g;
                g.start = start;
                g.end = stop;
                g.kind = RangeKind::PushPop;
                g.text = text;
                g.globalTid = context.globalPid | 1;
                g.endGlobalTid = g.globalTid;
                rows.addRange(g);
                break;
            }
            default:
                break;
        }
    }
}

}  // namespace osc::agent

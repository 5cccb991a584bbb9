#include "agent/fake/fake_source.h"

#include "agent/core/capture_session.h"
#include "analyzer/capture/background_thread.h"

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
        if (std::sscanf(v, "%lld,%d,%lld,%lld", &first, &count, &period, &duration) == 4 && count > 0 &&
            period >= 0 && duration > 0)
            o.sendRecv = {first, period, duration, count};
    }
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
    thread_ = startBackgroundThread([this] { produce(); });
    return true;
}

void FakeActivitySource::stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
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
    using clock = std::chrono::steady_clock;
    const auto begin = clock::now();
    uint64_t count = 0, step = 0;
    uint32_t correlation = 1;
    emitSendRecvKernels(correlation);
    while (running_) {
        if (options_.maxRecords && count >= options_.maxRecords) break;
        if (options_.recordsPerSecond > 0) {
            const double due = std::chrono::duration<double>(clock::now() - begin).count() *
                               options_.recordsPerSecond;
            if (static_cast<double>(count) >= due) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                continue;
            }
        }
        const int64_t t0 = realtimeNs();
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
            r.correlationId = correlation++;
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
        k.correlationId = correlation++;
        emit(k);
        FakeRecord n = k;
        n.nameIndex = kNccl;
        n.streamId = 13;
        n.start = t0 + 21000;
        n.end = t0 + 61000;
        n.correlationId = correlation++;
        emit(n);
        FakeRecord e = k;
        e.nameIndex = (step % 2) ? kElementwise : kLayerNorm;
        e.start = t0 + 62000;
        e.end = t0 + 80000;
        e.correlationId = correlation++;
        emit(e);
        count += 4;
        produced_.fetch_add(4, std::memory_order_relaxed);
        ++step;
    }
    // The last records are due now, not at the next flush: the benchmark
    // times how long the writer takes to catch up with them.
    if (options_.maxRecords && count >= options_.maxRecords) completeCurrent();
    finished_ = true;
}

void FakeActivitySource::emitSendRecvKernels(uint32_t& correlation) {
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
        k.correlationId = correlation++;
        emit(k);
    }
}

void FakeActivitySource::decode(const uint8_t* buffer, size_t validBytes, const DecodeContext& context,
                                RowSink& rows) {
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
            default: break;
        }
    }
}

}  // namespace osc::agent

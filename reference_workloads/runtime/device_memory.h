// Owning wrappers for device memory, pinned host memory, streams and events.
// Destructors ignore errors: they run during unwinding after a failure.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "reference_workloads/runtime/cuda_check.h"
#include "reference_workloads/support/result_check.h"
#include "reference_workloads/support/workload_options.h"

namespace oscwl {

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
        if (bytes) OSC_CUDA(cudaMalloc(&ptr_, bytes));
    }
    ~DeviceBuffer() {
        if (ptr_) cudaFree(ptr_);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(bytes_, o.bytes_);
        return *this;
    }
    void* get() const { return ptr_; }
    // Byte-offset pointer into the buffer.
    void* at(std::size_t offset) const { return static_cast<char*>(ptr_) + offset; }
    std::size_t bytes() const { return bytes_; }

private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
        if (bytes) OSC_CUDA(cudaHostAlloc(&ptr_, bytes, cudaHostAllocDefault));
    }
    ~PinnedBuffer() {
        if (ptr_) cudaFreeHost(ptr_);
    }
    PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(bytes_, o.bytes_);
        return *this;
    }
    void* get() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }

private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

class Stream {
public:
    Stream() { OSC_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
    ~Stream() {
        if (s_) cudaStreamDestroy(s_);
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return s_; }
    void sync() const { OSC_CUDA(cudaStreamSynchronize(s_)); }

private:
    cudaStream_t s_ = nullptr;
};

class Event {
public:
    explicit Event(bool timing = false) {
        OSC_CUDA(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
    }
    // A moved-from event holds null; destroying null fails with "invalid
    // resource handle", which cudaGetLastError() then reports at the next
    // kernel launch (seen on the H100 when vector<Event> grew).
    ~Event() {
        if (e_) cudaEventDestroy(e_);
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
    cudaEvent_t get() const { return e_; }
    void record(cudaStream_t s) const { OSC_CUDA(cudaEventRecord(e_, s)); }
    // Makes `s` wait (on the GPU) for the work recorded by this event.
    void wait_on(cudaStream_t s) const { OSC_CUDA(cudaStreamWaitEvent(s, e_, 0)); }

private:
    cudaEvent_t e_ = nullptr;
};

// `count` elements of `dtype` at device address `src`, as floats, for the
// result checks. cudaMemcpy does not wait for work on non-blocking streams:
// callers whose work ran there synchronise first.
inline std::vector<float> download_floats(const void* src, std::size_t count, DType dtype) {
    std::vector<std::uint8_t> raw(count * dtype_bytes(dtype));
    OSC_CUDA(cudaMemcpy(raw.data(), src, raw.size(), cudaMemcpyDeviceToHost));
    return to_float(raw.data(), count, dtype == DType::bf16);
}

}  // namespace oscwl

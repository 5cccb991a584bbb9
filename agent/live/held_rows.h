// Rows of the record stream held until the steps they belong to have closed
// (step_assembler.h). Names point into the stream's name table (kernel, API
// and NCCL names: a few thousand per job however long it runs, stable
// storage); a range's text is owned by its row and goes with it, since a
// step's name is new every step.
#pragma once

#include "analyzer/capture/capture_writer.h"

#include <cstddef>
#include <string>
#include <vector>

namespace osc::agent::live {

// A queue in one vector: rows are appended, dropped from the front, and
// walked in between. std::deque would allocate a block every three kernel
// rows; this reuses its storage, moving what is left to the front once the
// dropped part is the larger half and at least kMinDropped rows: a step's
// close drops about half of what is held, and moving the other half every
// step was 7 % of the writer thread at 40,000 records/s. What is dropped
// and not yet moved out is at most the larger of kMinDropped rows and what
// is held.
template <class T>
class RowQueue {
public:
    static constexpr size_t kMinDropped = 16384;
    void push_back(const T& v) { items_.push_back(v); }
    void push_back(T&& v) { items_.push_back(std::move(v)); }
    void pop_front() {
        if (++head_ * 2 >= items_.size() && (head_ >= kMinDropped || head_ == items_.size())) {
            items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
            head_ = 0;
        }
    }
    T& front() { return items_[head_]; }
    const T& front() const { return items_[head_]; }
    bool empty() const { return head_ == items_.size(); }
    size_t size() const { return items_.size() - head_; }
    T* begin() { return items_.data() + head_; }
    T* end() { return items_.data() + items_.size(); }
    const T* begin() const { return items_.data() + head_; }
    const T* end() const { return items_.data() + items_.size(); }

private:
    std::vector<T> items_;
    size_t head_ = 0;
};

// A RowQueue of large rows with a small key of each beside it, index for
// index (Key::of(row)): a step's close walks every held row's times and ids,
// and the rows, held since their step ran, are no longer in the cache; the
// keys are a sixth of the memory. Rows are changed in place only where the
// key does not change (`written`).
template <class T, class Key>
class KeyedRowQueue {
public:
    void push_back(const T& v) {
        keys_.push_back(Key::of(v));
        items_.push_back(v);
    }
    void pop_front() {
        keys_.pop_front();
        items_.pop_front();
    }
    T& front() { return items_.front(); }
    const T& front() const { return items_.front(); }
    bool empty() const { return items_.empty(); }
    size_t size() const { return items_.size(); }
    T* begin() { return items_.begin(); }
    T* end() { return items_.end(); }
    const T* begin() const { return items_.begin(); }
    const T* end() const { return items_.end(); }
    // keys()[i] is begin()[i]'s.
    const Key* keys() const { return keys_.begin(); }

private:
    RowQueue<T> items_;
    RowQueue<Key> keys_;
};

template <class Row>
struct Held {
    Row row;
    bool written = false;  // already in the running step capture
};

struct HeldCall {
    ApiCallRow row;
    uint32_t name = kNoId;  // row.name's id in the stream's name table
    bool launch = false;    // a launch whose GPU record is awaited (api_call_names.h)
    bool written = false;
};

// What a step's close reads of every held kernel and call.
struct KernelKey {
    TimeNs start = 0, end = 0;
    uint32_t device = 0, correlation = 0;
    static KernelKey of(const Held<KernelRow>& h) {
        return {h.row.start, h.row.end, h.row.deviceId, h.row.correlationId};
    }
};
struct CallKey {
    TimeNs start = 0;
    uint32_t correlation = 0;
    bool launch = false;
    static CallKey of(const HeldCall& h) { return {h.row.start, h.row.correlationId, h.launch}; }
};

struct HeldRange {
    RangeRow row;  // text and domain views: see view()
    std::string text, domain;
    bool written = false;
    RangeRow view() const {
        RangeRow r = row;
        r.text = text;
        r.domain = domain;
        return r;
    }
};

struct HeldRows {
    KeyedRowQueue<Held<KernelRow>, KernelKey> kernels;
    RowQueue<Held<CopyRow>> copies;
    RowQueue<Held<MemsetRow>> memsets;
    KeyedRowQueue<HeldCall, CallKey> apiCalls;
    RowQueue<HeldRange> ranges;  // NVTX ranges and marks other than steps
    RowQueue<Held<SyncRow>> syncs;
    RowQueue<Held<CudaEventRow>> events;
    RowQueue<Held<CollectiveRow>> collectives;

    size_t size() const {
        return kernels.size() + copies.size() + memsets.size() + apiCalls.size() + ranges.size() + syncs.size() +
               events.size() + collectives.size();
    }
    void clear() { *this = HeldRows{}; }
};

}  // namespace osc::agent::live

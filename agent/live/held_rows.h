// Rows of the record stream held until the steps they belong to have closed
// (step_assembler.h). Names point into the stream's name table (kernel, API
// and NCCL names: a few thousand per job however long it runs, stable
// storage); a range's text is owned by its row and goes with it, since a
// step's name is new every step.
#pragma once

#include "analyzer/capture/capture_writer.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace osc::agent::live {

// A queue of rows in one circular buffer (a power of two of them): rows
// are appended, dropped from the front, and walked in between, and none is
// ever moved but when the buffer grows. Every row has a sequence number, its
// place in the order of arrival, by which it can be found while it is held.
// A queue that retains (setRetaining) keeps the rows dropped from its front
// until releaseBefore() lets them go: the look-back ring's steps name their
// rows by sequence number instead of copying them (step_ring.h), which was
// 12 % of the writer thread at 40,000 records/s. std::deque would allocate a
// block every three kernel rows; a vector erasing its front moves the rows
// that stay.
template <class T>
class RowQueue {
public:
    template <class Q, class V>
    class Iter {
    public:
        Iter(Q* q, uint64_t seq) : q_(q), seq_(seq) {}
        V& operator*() const { return q_->bySeq(seq_); }
        V* operator->() const { return &q_->bySeq(seq_); }
        Iter& operator++() {
            ++seq_;
            return *this;
        }
        bool operator==(const Iter& o) const { return seq_ == o.seq_; }
        bool operator!=(const Iter& o) const { return seq_ != o.seq_; }

    private:
        Q* q_;
        uint64_t seq_;
    };
    using iterator = Iter<RowQueue, T>;
    using const_iterator = Iter<const RowQueue, const T>;

    void push_back(const T& v) {
        if (end_ - first_ == items_.size()) grow();
        items_[end_ & mask_] = v;
        ++end_;
    }
    void push_back(T&& v) {
        if (end_ - first_ == items_.size()) grow();
        items_[end_ & mask_] = std::move(v);
        ++end_;
    }
    // A new last row's slot, to fill in place (it may hold an old row).
    T& append() {
        if (end_ - first_ == items_.size()) grow();
        return items_[end_++ & mask_];
    }
    void pop_front() {
        ++head_;
        if (!retaining_) first_ = head_;
    }
    T& front() { return bySeq(head_); }
    const T& front() const { return bySeq(head_); }
    bool empty() const { return head_ == end_; }
    size_t size() const { return static_cast<size_t>(end_ - head_); }
    // The i-th row held (from the front).
    T& operator[](size_t i) { return bySeq(head_ + i); }
    const T& operator[](size_t i) const { return bySeq(head_ + i); }
    iterator begin() { return {this, head_}; }
    iterator end() { return {this, end_}; }
    const_iterator begin() const { return {this, head_}; }
    const_iterator end() const { return {this, end_}; }

    // Whether an earlier step's record holds the i-th row held.
    bool& writtenAt(size_t i) { return (*this)[i].written; }
    // Sequence numbers: of the i-th row held, of the next row to come.
    uint64_t seqAt(size_t i) const { return head_ + i; }
    uint64_t endSeq() const { return end_; }
    // A row held or retained (holds(seq)).
    bool holds(uint64_t seq) const { return seq >= first_ && seq < end_; }
    T& bySeq(uint64_t seq) { return items_[seq & mask_]; }
    const T& bySeq(uint64_t seq) const { return items_[seq & mask_]; }

    // Keeps the rows dropped from the front from now on (until released).
    void setRetaining(bool on) {
        retaining_ = on;
        if (!on) first_ = head_;
    }
    // Lets the retained rows before `seq` go (never a row still held).
    void releaseBefore(uint64_t seq) { first_ = std::max(first_, std::min(seq, head_)); }
    size_t retained() const { return static_cast<size_t>(head_ - first_); }

private:
    void grow() {
        std::vector<T> bigger(std::max<size_t>(64, items_.size() * 2));
        const uint64_t mask = bigger.size() - 1;
        for (uint64_t s = first_; s < end_; ++s) bigger[s & mask] = std::move(items_[s & mask_]);
        items_ = std::move(bigger);
        mask_ = mask;
    }

    std::vector<T> items_;
    uint64_t mask_ = 0;
    uint64_t first_ = 0, head_ = 0, end_ = 0;  // retained from first_, held from head_
    bool retaining_ = false;
};

// A RowQueue of large rows with a small key of each beside it, index for
// index (Key::of(row)): a step's close walks every held row's times and ids,
// and the rows, held since their step ran, are no longer in the cache; the
// keys are a fifth of the memory. Rows are never changed in place; the
// `written` mark lives in the key.
template <class T, class Key>
class KeyedRowQueue {
public:
    void push_back(const T& v) {
        keys_.push_back(Key::of(v));
        items_.push_back(v);
    }
    // Appends the row `fill` writes into its slot (no copy on the way).
    template <class Fill>
    void emplace(Fill fill) {
        T& row = items_.append();
        fill(row);
        keys_.push_back(Key::of(row));
    }
    void pop_front() {
        keys_.pop_front();
        items_.pop_front();
    }
    T& front() { return items_.front(); }
    const T& front() const { return items_.front(); }
    bool empty() const { return items_.empty(); }
    size_t size() const { return items_.size(); }
    T& operator[](size_t i) { return items_[i]; }
    const T& operator[](size_t i) const { return items_[i]; }
    auto begin() { return items_.begin(); }
    auto end() { return items_.end(); }
    auto begin() const { return items_.begin(); }
    auto end() const { return items_.end(); }
    // key(i) is (*this)[i]'s.
    const Key& key(size_t i) const { return keys_[i]; }
    // `written` is the key's: it is read and set where only keys are (the
    // row's own copy of it stays false).
    bool& writtenAt(size_t i) { return keys_[i].written; }

    uint64_t seqAt(size_t i) const { return items_.seqAt(i); }
    uint64_t endSeq() const { return items_.endSeq(); }
    bool holds(uint64_t seq) const { return items_.holds(seq); }
    T& bySeq(uint64_t seq) { return items_.bySeq(seq); }
    const T& bySeq(uint64_t seq) const { return items_.bySeq(seq); }
    void setRetaining(bool on) { items_.setRetaining(on); }  // the keys are never needed after
    void releaseBefore(uint64_t seq) { items_.releaseBefore(seq); }
    size_t retained() const { return items_.retained(); }

private:
    RowQueue<T> items_;
    RowQueue<Key> keys_;
};

template <class Row>
struct Held {
    Row row;
    bool written = false;  // already in the running step capture
};

// An API call as held: ApiCallRow without its name's text (40 bytes, not
// 64), thousands a step; its name is an id in the stream's name table.
struct HeldCall {
    TimeNs start = 0, end = 0;
    uint64_t globalTid = 0;
    uint32_t correlationId = 0;
    uint32_t name = kNoId;
    int32_t returnValue = 0;
    ApiKind kind = ApiKind::Runtime;
    bool launch = false;  // a launch whose GPU record is awaited (api_call_names.h)
    bool written = false;
    // The row, its name `text` (the name table's).
    ApiCallRow row(std::string_view text) const {
        ApiCallRow r;
        r.start = start;
        r.end = end;
        r.kind = kind;
        r.globalTid = globalTid;
        r.correlationId = correlationId;
        r.name = text;
        r.returnValue = returnValue;
        return r;
    }
};

// What a step's close reads of every held kernel and call; of a kernel, all
// that the step's capture takes of it, so that building one reads no row.
struct KernelKey {
    TimeNs start = 0, end = 0;
    uint32_t device = 0, correlation = 0;
    uint32_t stream = 0, name = 0, shortName = 0;  // names: ids in the stream's name table
    bool written = false;
    static KernelKey of(const Held<KernelRow>& h) {
        return {h.row.start,           h.row.end,         h.row.deviceId, h.row.correlationId, h.row.streamId,
                h.row.demangledNameId, h.row.shortNameId, h.written};
    }
};
struct CallKey {
    TimeNs start = 0;
    uint32_t correlation = 0;
    bool launch = false;
    bool written = false;
    static CallKey of(const HeldCall& h) { return {h.start, h.correlationId, h.launch, h.written}; }
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

// A sequence number in each of HeldRows' queues.
struct RowMarks {
    uint64_t kernels = 0, copies = 0, memsets = 0, apiCalls = 0, ranges = 0, syncs = 0, events = 0, collectives = 0;
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
    void clear() {
        const bool retaining = retaining_;
        *this = HeldRows{};
        setRetaining(retaining);
    }
    // Each queue keeps the rows dropped from its front until released (RowQueue).
    void setRetaining(bool on) {
        retaining_ = on;
        forEach([on](auto& q) { q.setRetaining(on); });
    }
    void releaseBefore(const RowMarks& m) {
        kernels.releaseBefore(m.kernels);
        copies.releaseBefore(m.copies);
        memsets.releaseBefore(m.memsets);
        apiCalls.releaseBefore(m.apiCalls);
        ranges.releaseBefore(m.ranges);
        syncs.releaseBefore(m.syncs);
        events.releaseBefore(m.events);
        collectives.releaseBefore(m.collectives);
    }
    // Every queue's next sequence number: releaseBefore(it) lets every retained row go.
    RowMarks endSeqs() const {
        return {kernels.endSeq(), copies.endSeq(), memsets.endSeq(), apiCalls.endSeq(),
                ranges.endSeq(),  syncs.endSeq(),  events.endSeq(),  collectives.endSeq()};
    }
    size_t retained() const {
        size_t n = 0;
        forEach([&n](const auto& q) { n += q.retained(); });
        return n;
    }
    // The memory the retained rows take (range texts left out).
    size_t retainedBytes() const {
        size_t n = 0;
        forEach([&n](const auto& q) { n += q.retained() * sizeof(*q.begin()); });
        return n;
    }

private:
    template <class F>
    void forEach(F f) {
        f(kernels), f(copies), f(memsets), f(apiCalls), f(ranges), f(syncs), f(events), f(collectives);
    }
    template <class F>
    void forEach(F f) const {
        f(kernels), f(copies), f(memsets), f(apiCalls), f(ranges), f(syncs), f(events), f(collectives);
    }
    bool retaining_ = false;
};

}  // namespace osc::agent::live

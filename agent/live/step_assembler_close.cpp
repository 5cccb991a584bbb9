// A closing step's two products: the capture its metrics are measured on
// (buildCapture), and its record for the look-back ring and step captures
// (recordStep, materialize), both from the rows the assembler holds.
#include "agent/live/step_assembler.h"

#include "analyzer/capture/row_tables.h"

#include <algorithm>
#include <type_traits>

namespace osc::agent::live {
namespace {

// The columns the step's metrics read: no launch details (grid, block,
// registers, graph ids), which only a report's interference table names
// (absent columns count as none, as in a capture loaded without them).
void resizeKernels(KernelTable& k, size_t n) {
    k.start.resize(n);
    k.end.resize(n);
    k.stream.resize(n);
    k.correlation.resize(n);
    k.name.resize(n);
    k.shortName.resize(n);
}

void setKernel(KernelTable& k, size_t i, const KernelKey& r, uint32_t name, uint32_t shortName) {
    k.start[i] = r.start;
    k.end[i] = r.end;
    k.stream[i] = r.stream;
    k.correlation[i] = r.correlation;
    k.name[i] = name;
    k.shortName[i] = shortName;
}

}  // namespace

void sortRuns(std::vector<std::pair<TimeNs, uint32_t>>& v, std::vector<std::pair<TimeNs, uint32_t>>& scratch,
              std::vector<size_t>& runs) {
    runs.assign(1, 0);
    for (size_t i = 1; i < v.size(); ++i)
        if (v[i] < v[i - 1]) runs.push_back(i);
    if (runs.size() == 1) return;
    if (runs.size() > 64) {
        std::sort(v.begin(), v.end());
        return;
    }
    runs.push_back(v.size());
    scratch.resize(v.size());
    while (runs.size() > 2) {
        size_t kept = 0;
        size_t k = 0;
        for (; k + 2 < runs.size(); k += 2) {
            std::merge(v.begin() + static_cast<std::ptrdiff_t>(runs[k]),
                       v.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]),
                       v.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]),
                       v.begin() + static_cast<std::ptrdiff_t>(runs[k + 2]),
                       scratch.begin() + static_cast<std::ptrdiff_t>(runs[k]));
            runs[kept++] = runs[k];
        }
        if (k + 1 < runs.size()) {  // an odd run left over
            std::copy(v.begin() + static_cast<std::ptrdiff_t>(runs[k]),
                      v.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]),
                      scratch.begin() + static_cast<std::ptrdiff_t>(runs[k]));
            runs[kept++] = runs[k];
        }
        runs[kept++] = v.size();
        runs.resize(kept);
        v.swap(scratch);
    }
}

void StepAssembler::IdSet::assign(const std::vector<uint32_t>& ids) {
    bits.clear();
    sparse.clear();
    if (ids.empty()) return;
    const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
    base = *lo;
    // Ids from several counters far apart would make a huge map: then only
    // the exact ids (sorted) are kept, by binary search.
    const size_t span = size_t{*hi} - base + 1;
    if (span > 16 * ids.size() + 4096) {
        sparse = ids;
        std::sort(sparse.begin(), sparse.end());
        return;
    }
    bits.assign(span, 0);
    for (uint32_t id : ids) bits[id - base] = 1;
}

KernelRow StepAssembler::kernelRow(const Held<KernelRow>& held) const {
    KernelRow row = held.row;
    row.demangledName = names_.at(row.demangledNameId);
    row.shortName = names_.at(row.shortNameId);
    return row;
}

uint32_t StepAssembler::localName(uint32_t id) {
    if (id == kNoId) return kNoId;
    if (id >= localNames_.size()) {
        localNames_.resize(id + 1, kNoId);
        localNamesGeneration_.resize(id + 1, 0);
    }
    if (localNamesGeneration_[id] != generation_) {
        localNames_[id] = capture_.strings.intern(names_.at(id));
        localNamesGeneration_[id] = generation_;
    }
    return localNames_[id];
}

void StepAssembler::buildCapture(const OpenStep& step, TimeNs slotEnd) {
    const TimeNs from = step.range.row.start, to = step.range.row.end;
    windows_.clear();
    // The held rows' keys, not the rows (held_rows.h); the calls of the
    // range and of the slot are kept by index for recordStep().
    const TimeNs until = std::max(to, slotEnd);
    slotCallRows_.clear();
    scratchIds_.clear();
    slotIds_.clear();
    for (uint32_t i = 0; i < rows_.apiCalls.size(); ++i) {
        const CallKey& c = rows_.apiCalls.key(i);
        if (c.start < from || c.start >= until) continue;
        slotCallRows_.push_back(i);
        if (c.start < to) scratchIds_.push_back(c.correlation);
        if (c.start < slotEnd) slotIds_.push_back(c.correlation);
    }
    claimed_.assign(scratchIds_);
    slotCalls_.assign(slotIds_);
    const auto widen = [&](uint32_t device, uint32_t correlation, TimeNs start, TimeNs end) {
        if (end > start && claimed_.contains(correlation)) windows_.widen(device, start, end);
    };
    for (size_t i = 0; i < rows_.kernels.size(); ++i) {
        const KernelKey& k = rows_.kernels.key(i);
        widen(k.device, k.correlation, k.start, k.end);
    }
    for (const auto& c : rows_.copies) widen(c.row.deviceId, c.row.correlationId, c.row.start, c.row.end);
    for (const auto& m : rows_.memsets) widen(m.row.deviceId, m.row.correlationId, m.row.start, m.row.end);

    capture_ = Capture{};
    ++generation_;
    capture_.processes.emplace_back();
    Process& p = capture_.processes.back();
    // The window's kernels per device in start order (the order the
    // analyzer wants, so finalize() has nothing to sort), then written by
    // index into tables sized once: a step of thousands of kernels is
    // otherwise mostly allocation and reordering.
    // In the same walk, the kernels a record of the step takes (recordStep):
    // those the slot launched, and those in the window.
    kernelOrder_.resize(windows_.byDevice.size());
    for (auto& order : kernelOrder_) order.clear();
    recordKernels_.clear();
    for (uint32_t i = 0; i < rows_.kernels.size(); ++i) {
        const KernelKey& k = rows_.kernels.key(i);
        const Interval* w = windows_.find(k.device);
        const bool inWindow = w && intersects(k.start, k.end, *w);
        if (inWindow) kernelOrder_[k.device].push_back({k.start, i});
        if (inWindow || slotCalls_.contains(k.correlation)) recordKernels_.push_back(i);
    }
    // Devices made once, in id order (deviceById keeps them sorted), then found by id.
    std::vector<Device*> deviceOf(kernelOrder_.size(), nullptr);
    for (uint32_t d = 0; d < kernelOrder_.size(); ++d)
        if (windows_.find(d)) p.deviceById(d);
    for (uint32_t d = 0; d < kernelOrder_.size(); ++d)
        if (windows_.find(d)) deviceOf[d] = &p.deviceById(d);
    RangeTable& r = p.ranges;
    r.start.push_back(from);
    r.end.push_back(to);
    r.name.push_back(capture_.strings.intern(step.range.text));
    r.globalTid.push_back(step.range.row.globalTid);
    r.domain.push_back(kNoId);
    r.category.push_back(0);
    r.color.push_back(0);
    r.kind.push_back(step.range.row.kind);
    r.onGpu.push_back(0);
    // The range's calls, written by index into tables sized once (as the kernels).
    const size_t rangeCalls = scratchIds_.size();
    ApiCallTable& a = p.apiCalls;
    a.start.resize(rangeCalls);
    a.end.resize(rangeCalls);
    a.globalTid.resize(rangeCalls);
    a.correlation.resize(rangeCalls);
    a.name.resize(rangeCalls);
    a.returnValue.resize(rangeCalls);
    a.kind.resize(rangeCalls);
    size_t call = 0;
    for (const uint32_t i : slotCallRows_) {
        const HeldCall& c = rows_.apiCalls[i];
        if (c.start >= to) continue;
        a.start[call] = c.start;
        a.end[call] = c.end;
        a.globalTid[call] = c.globalTid;
        a.correlation[call] = c.correlationId;
        a.name[call] = localName(c.name);
        a.returnValue[call] = c.returnValue;
        a.kind[call] = c.kind;
        ++call;
    }
    const auto window = [&](uint32_t device) { return windows_.find(device); };
    for (uint32_t d = 0; d < kernelOrder_.size(); ++d) {
        auto& order = kernelOrder_[d];
        if (order.empty()) continue;
        sortRuns(order, sortScratch_, sortRuns_);
        KernelTable& table = deviceOf[d]->kernels;
        resizeKernels(table, order.size());
        for (size_t row = 0; row < order.size(); ++row) {
            const KernelKey& k = rows_.kernels.key(order[row].second);
            setKernel(table, row, k, localName(k.name), localName(k.shortName));
        }
    }
    for (const auto& h : rows_.copies) {
        const Interval* w = window(h.row.deviceId);
        if (!w || !intersects(h.row.start, h.row.end, *w)) continue;
        appendRow(p.deviceById(h.row.deviceId).copies, h.row);
    }
    for (const auto& h : rows_.memsets) {
        const Interval* w = window(h.row.deviceId);
        if (!w || !intersects(h.row.start, h.row.end, *w)) continue;
        appendRow(p.deviceById(h.row.deviceId).memsets, h.row);
    }
    for (const auto& h : rows_.collectives) {
        const CollectiveRow& c = h.row;
        const Interval* w = window(c.deviceId);
        const bool launched = c.enqueue >= from && c.enqueue < to;
        const bool near = w && c.gpuStart >= 0 &&
                          intersects(c.gpuStart, std::max(c.gpuEnd, c.gpuStart + 1),
                                     {w->start - kPluginSlackNs, w->end + kPluginSlackNs});
        if (!launched && !near) continue;
        appendRow(p.collectives, capture_.strings, c);
    }
    for (auto& [id, gpu] : gpus_)
        if (Device* d = const_cast<Device*>(p.findDevice(id))) d->gpu = gpu;
    capture_.finalize();
}

void StepAssembler::recordStep(const OpenStep& step, TimeNs slotEnd, bool complete, StepRows& out) {
    const TimeNs from = step.range.row.start;
    const auto inSlot = [&](TimeNs t) { return t >= from && t < slotEnd; };
    out.clear();
    out.name = step.range.text;
    out.number = step.number;
    out.rangeStart = from;
    out.rangeEnd = step.range.row.end;
    out.slotEnd = slotEnd;
    out.complete = complete;
    out.range = step.range;
    out.lowest = rows_.endSeqs();
    // Each row says whether an earlier record holds it (`written`), and is
    // then marked: a file of consecutive steps writes it once. Rows are named
    // by sequence number (StepRows), in the order of the queue.
    const auto take = [](auto& queue, size_t i, std::vector<uint64_t>& into, uint64_t& lowest) {
        bool& written = queue.writtenAt(i);
        const uint64_t seq = queue.seqAt(i);
        into.push_back(seq << 1 | (written ? 1 : 0));
        lowest = std::min(lowest, seq);
        written = true;
    };
    // The rows buildCapture() found for this step (it ran just before, and
    // the held rows have not changed since).
    for (const uint32_t i : slotCallRows_)
        if (inSlot(rows_.apiCalls.key(i).start)) take(rows_.apiCalls, i, out.apiCalls, out.lowest.apiCalls);
    for (size_t i = 0; i < rows_.ranges.size(); ++i)
        if (inSlot(rows_.ranges[i].row.start)) take(rows_.ranges, i, out.ranges, out.lowest.ranges);
    for (size_t i = 0; i < rows_.syncs.size(); ++i)
        if (inSlot(rows_.syncs[i].row.start)) take(rows_.syncs, i, out.syncs, out.lowest.syncs);
    for (size_t i = 0; i < rows_.events.size(); ++i)
        if (slotCalls_.contains(rows_.events[i].row.correlationId))
            take(rows_.events, i, out.events, out.lowest.events);
    // The slot's GPU work, and whatever else ran in the step's window (which
    // the step's metrics count), so the file's report gives the same numbers
    // (the kernels: found by buildCapture's walk).
    const auto wanted = [&](uint32_t device, uint32_t correlation, TimeNs start, TimeNs end) {
        if (slotCalls_.contains(correlation)) return true;
        const Interval* w = windows_.find(device);
        return w && intersects(start, end, *w);
    };
    for (const uint32_t i : recordKernels_) take(rows_.kernels, i, out.kernels, out.lowest.kernels);
    for (size_t i = 0; i < rows_.copies.size(); ++i) {
        const CopyRow& c = rows_.copies[i].row;
        if (wanted(c.deviceId, c.correlationId, c.start, c.end)) take(rows_.copies, i, out.copies, out.lowest.copies);
    }
    for (size_t i = 0; i < rows_.memsets.size(); ++i) {
        const MemsetRow& m = rows_.memsets[i].row;
        if (wanted(m.deviceId, m.correlationId, m.start, m.end))
            take(rows_.memsets, i, out.memsets, out.lowest.memsets);
    }
    for (size_t i = 0; i < rows_.collectives.size(); ++i) {
        const CollectiveRow& c = rows_.collectives[i].row;
        const Interval* w = windows_.find(c.deviceId);
        const bool near = w && c.gpuStart >= 0 &&
                          intersects(c.gpuStart, std::max(c.gpuEnd, c.gpuStart + 1),
                                     {w->start - kPluginSlackNs, w->end + kPluginSlackNs});
        if (inSlot(c.enqueue) || near) take(rows_.collectives, i, out.collectives, out.lowest.collectives);
    }
}

void StepAssembler::materialize(const StepRows& in, RecordedStep& out) const {
    out.clear();
    static_cast<StepHeader&>(out) = static_cast<const StepHeader&>(in);
    if (in.owned) {
        out = *in.owned;
        return;
    }
    // A row the queues no longer hold cannot be named by a kept record
    // (releaseBefore follows StepRing::lowest); skipped all the same.
    const auto copy = [this](const auto& queue, const std::vector<uint64_t>& named, auto& into) {
        into.reserve(named.size());
        for (const uint64_t n : named) {
            if (!queue.holds(n >> 1)) continue;
            const auto& held = queue.bySeq(n >> 1);
            if constexpr (std::is_same_v<std::decay_t<decltype(held)>, HeldRange>)
                into.push_back(held);
            else if constexpr (std::is_same_v<std::decay_t<decltype(held)>, HeldCall>)
                into.push_back({held.row(names_.at(held.name))});
            else if constexpr (std::is_same_v<std::decay_t<decltype(held)>, Held<KernelRow>>)
                into.push_back({kernelRow(held)});
            else
                into.push_back({held.row});
            into.back().written = (n & 1) != 0;
        }
    };
    copy(rows_.apiCalls, in.apiCalls, out.apiCalls);
    copy(rows_.ranges, in.ranges, out.ranges);
    copy(rows_.syncs, in.syncs, out.syncs);
    copy(rows_.events, in.events, out.events);
    copy(rows_.kernels, in.kernels, out.kernels);
    copy(rows_.copies, in.copies, out.copies);
    copy(rows_.memsets, in.memsets, out.memsets);
    copy(rows_.collectives, in.collectives, out.collectives);
}

}  // namespace osc::agent::live

#include "agent/live/recorded_step.h"

namespace osc::agent::live {
namespace {

template <class Row>
size_t capacityBytes(const std::vector<Row>& v) {
    return v.capacity() * sizeof(Row);
}

void clearHeader(StepHeader& h) {
    h.name.clear();
    h.number = -1;
    h.rangeStart = h.rangeEnd = h.slotEnd = 0;
    h.complete = true;
    h.range = HeldRange{};
}

}  // namespace

void RecordedStep::clear() {
    clearHeader(*this);
    apiCalls.clear();
    ranges.clear();
    syncs.clear();
    events.clear();
    kernels.clear();
    copies.clear();
    memsets.clear();
    collectives.clear();
}

void RecordedStep::writeTo(RowSink& out, bool afterEarlierSteps) const {
    const auto wanted = [&](bool heldBefore) { return !(afterEarlierSteps && heldBefore); };
    out.addRange(range.view());
    for (const auto& c : apiCalls)
        if (wanted(c.written)) out.addApiCall(c.row);
    for (const auto& r : ranges)
        if (wanted(r.written)) out.addRange(r.view());
    for (const auto& y : syncs)
        if (wanted(y.written)) out.addSync(y.row);
    for (const auto& e : events)
        if (wanted(e.written)) out.addCudaEvent(e.row);
    for (const auto& k : kernels)
        if (wanted(k.written)) {
            KernelRow row = k.row;
            row.demangledNameId = row.shortNameId = kNoId;  // the assembler's ids, not the file's
            out.addKernel(row);
        }
    for (const auto& c : copies)
        if (wanted(c.written)) out.addCopy(c.row);
    for (const auto& m : memsets)
        if (wanted(m.written)) out.addMemset(m.row);
    for (const auto& c : collectives)
        if (wanted(c.written)) out.addCollective(c.row);
}

size_t RecordedStep::bytes() const {
    size_t n = sizeof(*this) + name.capacity() + range.text.capacity() + range.domain.capacity();
    n += capacityBytes(apiCalls) + capacityBytes(ranges) + capacityBytes(syncs) + capacityBytes(events) +
         capacityBytes(kernels) + capacityBytes(copies) + capacityBytes(memsets) + capacityBytes(collectives);
    for (const auto& r : ranges) n += r.text.capacity() + r.domain.capacity();
    return n;
}

void StepRows::clear() {
    clearHeader(*this);
    for (auto* v : {&apiCalls, &ranges, &syncs, &events, &kernels, &copies, &memsets, &collectives}) v->clear();
    owned.reset();
    lowest = RowMarks{};
}

size_t StepRows::bytes() const {
    size_t n = sizeof(*this) + name.capacity() + range.text.capacity() + range.domain.capacity();
    for (const auto* v : {&apiCalls, &ranges, &syncs, &events, &kernels, &copies, &memsets, &collectives})
        n += capacityBytes(*v);
    return n + (owned ? owned->bytes() : 0);
}

void DescriptionRows::writeTo(RowSink& out) const {
    for (const auto& g : gpus_) out.addGpu(g);
    for (const auto& [key, name] : streams_)
        out.addStreamName(std::get<0>(key), std::get<1>(key), std::get<2>(key), name);
    for (const auto& [tid, name] : threads_) out.addThreadName(tid, name);
}

}  // namespace osc::agent::live

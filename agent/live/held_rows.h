// Rows of the record stream held until the steps they belong to have closed
// (step_assembler.h). Names point into the stream's name table (kernel, API
// and NCCL names: a few thousand per job however long it runs, stable
// storage); a range's text is owned by its row and goes with it, since a
// step's name is new every step.
#pragma once

#include "analyzer/capture/capture_writer.h"

#include <cstddef>
#include <deque>
#include <string>

namespace osc::agent::live {

template <class Row>
struct Held {
    Row row;
    bool written = false;  // already in the running step capture
};

struct HeldCall {
    ApiCallRow row;
    bool launch = false;  // a launch whose GPU record is awaited (api_call_names.h)
    bool written = false;
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
    std::deque<Held<KernelRow>> kernels;
    std::deque<Held<CopyRow>> copies;
    std::deque<Held<MemsetRow>> memsets;
    std::deque<HeldCall> apiCalls;
    std::deque<HeldRange> ranges;  // NVTX ranges and marks other than steps
    std::deque<Held<SyncRow>> syncs;
    std::deque<Held<CudaEventRow>> events;
    std::deque<Held<CollectiveRow>> collectives;

    size_t size() const {
        return kernels.size() + copies.size() + memsets.size() + apiCalls.size() + ranges.size() + syncs.size() +
               events.size() + collectives.size();
    }
    void clear() { *this = HeldRows{}; }
};

}  // namespace osc::agent::live

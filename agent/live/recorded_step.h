// One closed step's rows, kept after the step assembler has let them go:
// what a step capture writes into its file, and what the look-back ring
// (step_ring.h) holds of the last steps. Names are views into the
// assembler's name table, which only grows (kernel, API and NCCL names; a
// few thousand per job), so a record stays valid as long as the assembler;
// range texts are owned.
#pragma once

#include "agent/live/held_rows.h"
#include "analyzer/capture/row_sink.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace osc::agent::live {

// What a record says of the step itself.
struct StepHeader {
    std::string name;     // the step range's text
    int64_t number = -1;  // the last number in it, -1 without
    TimeNs rangeStart = 0, rangeEnd = 0, slotEnd = 0;
    bool complete = true;
    HeldRange range;  // the step's own range
};

struct RecordedStep : StepHeader {
    // The rows of its CPU slot and GPU window. A row's `written` says that an
    // earlier step's record holds it too (GPU work that ran in both windows):
    // a file of consecutive steps writes it once.
    std::vector<Held<ApiCallRow>> apiCalls;
    std::vector<HeldRange> ranges;
    std::vector<Held<SyncRow>> syncs;
    std::vector<Held<CudaEventRow>> events;
    std::vector<Held<KernelRow>> kernels;
    std::vector<Held<CopyRow>> copies;
    std::vector<Held<MemsetRow>> memsets;
    std::vector<Held<CollectiveRow>> collectives;

    size_t rows() const {
        return 1 + apiCalls.size() + ranges.size() + syncs.size() + events.size() + kernels.size() + copies.size() +
               memsets.size() + collectives.size();
    }
    // Empties it, keeping the vectors' storage for the next step.
    void clear();
    // Its rows into `out`; with `afterEarlierSteps`, not those an earlier
    // step's record holds (the file being written has them already).
    void writeTo(RowSink& out, bool afterEarlierSteps) const;
    // The memory it holds (its vectors' capacity and the range texts).
    size_t bytes() const;
};

// A step's record as the look-back ring keeps it: its rows named by their
// sequence numbers in the assembler's queues, which retain them until the
// ring lets them go (StepAssembler::releaseBefore), instead of copied; the
// assembler turns it into a RecordedStep when a capture or a dump needs the
// rows (StepAssembler::materialize). A record whose rows had to be let go
// while it was kept (a job without steps for a long time) holds them copied,
// in `owned`.
struct StepRows : StepHeader {
    // Per queue: a row's sequence number << 1, | 1 when an earlier step's
    // record holds it too (RecordedStep's `written`).
    std::vector<uint64_t> apiCalls, ranges, syncs, events, kernels, copies, memsets, collectives;
    std::unique_ptr<RecordedStep> owned;
    // The lowest sequence number named in each queue; the queues' next ones when it names none.
    RowMarks lowest;

    size_t rows() const {
        if (owned) return owned->rows();
        return 1 + apiCalls.size() + ranges.size() + syncs.size() + events.size() + kernels.size() + copies.size() +
               memsets.size() + collectives.size();
    }
    void clear();
    size_t bytes() const;
};

// What describes rather than times (GPUs, stream and thread names), as a
// step capture's file starts with them; copied so that a file can be
// written away from the thread that owns the assembler.
class DescriptionRows final : public RowSink {
public:
    void addKernel(const KernelRow&) override {}
    void addCopy(const CopyRow&) override {}
    void addMemset(const MemsetRow&) override {}
    void addSync(const SyncRow&) override {}
    void addApiCall(const ApiCallRow&) override {}
    void addRange(const RangeRow&) override {}
    void addCollective(const CollectiveRow&) override {}
    void addGpu(const GpuInfo& g) override { gpus_.push_back(g); }
    void addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name) override {
        streams_.emplace_back(std::make_tuple(globalPid, deviceId, streamId), std::string(name));
    }
    void addThreadName(uint64_t globalTid, std::string_view name) override {
        threads_.emplace_back(globalTid, std::string(name));
    }
    void writeTo(RowSink& out) const;

private:
    std::vector<GpuInfo> gpus_;
    std::vector<std::pair<std::tuple<uint64_t, uint32_t, uint32_t>, std::string>> streams_;
    std::vector<std::pair<uint64_t, std::string>> threads_;
};

}  // namespace osc::agent::live

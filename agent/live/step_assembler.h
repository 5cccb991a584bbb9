// Training steps out of the record stream, as they finish, with memory
// bounded by the steps in flight rather than by the job's length.
//
// Rows come in the order CUPTI hands its buffers over, not in time order: a
// step's range arrives when it ends, its launches' API records around the
// same time, their kernels only once the GPU has run them. A step is closed
// when
//   1. the CPU has left it: the next step's range has arrived (or nothing
//      came for `cpuQuietNs`, or the stream ended), and
//   2. every launch inside its range has its GPU record (or `gpuWaitNs`
//      passed since 1: a record CUPTI lost must not hold the metrics; such
//      a step is closed incomplete).
// Its rows are then handed over as a one-process capture that the analyzer
// reads as it reads a file (the step's range, the API calls inside it, and
// every GPU record and NCCL row overlapping its GPU window, whichever step
// launched them: exactly what the analyzer's step metrics see in a full
// capture), and the rows nothing open can need any more are dropped.
//
// Which rows a step owns follows analyzer/metrics/steps.h: the GPU work a
// step launched is the work whose launching API call started inside its
// range; its window spans that work. A step capture (step_capture_file.h)
// also takes the rows of the step's CPU slot, from its range's start to the
// next step's start.
#pragma once

#include "agent/live/held_rows.h"
#include "agent/live/recorded_step.h"
#include "analyzer/capture/api_call_names.h"
#include "analyzer/capture/model.h"
#include "analyzer/capture/row_sink.h"
#include "analyzer/capture/string_table.h"
#include "analyzer/metrics/intervals.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace osc::agent::live {

struct AssemblerLimits {
    size_t maxRows = 1'000'000;  // held rows; beyond, the oldest step closes incomplete
    size_t maxOpenSteps = 256;   // ended ranges whose steps are not closed yet
    int64_t cpuQuietNs = 2'000'000'000;
    int64_t gpuWaitNs = 10'000'000'000;
    // Rows outside any step are kept this long (by their own timestamps)
    // before they are dropped: a job between steps, or without step ranges.
    int64_t keepOutsideStepsNs = 60'000'000'000;
};

// A closed step, valid during the handler call.
struct ClosedStep {
    std::string name;
    int64_t number = -1;  // the last number in its name; -1 when it has none
    TimeNs rangeStart = 0, rangeEnd = 0, slotEnd = 0;
    bool complete = true;
    const Capture* capture = nullptr;  // one process; times on the stream's timeline
    // Fills `out` with the rows of its slot and window (a step capture, the
    // look-back ring), marking those an earlier record holds too: named by
    // their sequence numbers (recordRows), or copied (record).
    std::function<void(StepRows& out)> recordRows;
    std::function<void(RecordedStep& out)> record;
};

// Sorts `v` (distinct pairs), which records in the order kernels ended leave
// in a few ascending runs: the runs are merged, pairwise (with many, a plain
// sort). `scratch` and `runs` are storage reused from call to call.
void sortRuns(std::vector<std::pair<TimeNs, uint32_t>>& v, std::vector<std::pair<TimeNs, uint32_t>>& scratch,
              std::vector<size_t>& runs);

// The last run of decimal digits in a step's name ("ProfilerStep#12" -> 12), -1 without.
int64_t stepNumberOf(std::string_view name);

class StepAssembler final : public RowSink {
public:
    using StepHandler = std::function<void(const ClosedStep&)>;
    struct Counters {
        uint64_t stepsClosed = 0, stepsIncomplete = 0;
        uint64_t rowsLate = 0;     // came after their step had closed
        uint64_t rowsDropped = 0;  // over maxRows
    };

    StepAssembler(std::regex stepPattern, AssemblerLimits limits = {});

    void addKernel(const KernelRow& row) override;
    void addCopy(const CopyRow& row) override;
    void addMemset(const MemsetRow& row) override;
    void addSync(const SyncRow& row) override;
    void addApiCall(const ApiCallRow& row) override;
    void addRange(const RangeRow& row) override;
    void addCollective(const CollectiveRow& row) override;
    void addGpu(const GpuInfo& gpu) override;
    void addCudaEvent(const CudaEventRow& row) override;
    void addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name) override;
    void addThreadName(uint64_t globalTid, std::string_view name) override;
    uint32_t stringId(std::string_view text) override { return names_.intern(text); }

    // Closes what can be closed (see above); `steadyNs` is CLOCK_MONOTONIC now.
    void advance(int64_t steadyNs, const StepHandler& handler);
    // The stream ended: every step with its range in is closed (complete or
    // not, as its records say), everything else dropped (after `beforeDrop`,
    // when given: the last moment the rows can be read).
    void finish(const StepHandler& handler, const std::function<void()>& beforeDrop = {});
    // A new stream (a new time origin): everything held is dropped.
    void clear();
    // A step capture stopped by request: the rows from `from` on that no
    // recorded step holds (the step in progress, work launched and never
    // finished), the ranges of steps not closed included, into `out`.
    void writeTail(TimeNs from, RowSink& out);

    // The look-back ring's records name rows by sequence number: with
    // `on`, the rows dropped are retained until releaseBefore() lets them go.
    void setRetaining(bool on) { rows_.setRetaining(on); }
    void releaseBefore(const RowMarks& marks) { rows_.releaseBefore(marks); }
    RowMarks endSeqs() const { return rows_.endSeqs(); }
    size_t retainedRows() const { return rows_.retained(); }
    size_t retainedBytes() const { return rows_.retainedBytes(); }
    // The rows `in` names (held or retained) into `out`, as record() gives them.
    void materialize(const StepRows& in, RecordedStep& out) const;

    const Counters& counters() const { return counters_; }
    size_t heldRows() const { return rows_.size(); }
    size_t openSteps() const { return open_.size(); }
    // The newest step range seen (its number, or -1), and the number of the
    // first step whose range started after the stream did (at time 0): the
    // first one this stream holds whole (-1 while none).
    int64_t newestStep() const { return newestStep_; }
    int64_t firstWholeStep() const { return firstWholeStep_; }
    bool sawSteps() const { return sawSteps_; }
    // Rows of any kind seen since the stream started (for "no step ranges").
    uint64_t rowsSeen() const { return rowsSeen_; }
    // The GPUs and names seen, for a step capture's file.
    const std::map<uint32_t, GpuInfo>& gpus() const { return gpus_; }
    void writeDescriptions(RowSink& out) const;
    // Counts the changes to what writeDescriptions writes.
    uint64_t descriptionsVersion() const { return descriptionsVersion_; }

private:
    // NCCL's plugin times come from the GPU's globaltimer, which is not CUPTI's
    // clock (about a millisecond apart on an H100): a row is the step's when it
    // is this close to the window; the analyzer matches it to its kernel.
    static constexpr TimeNs kPluginSlackNs = 5'000'000;
    static bool intersects(TimeNs start, TimeNs end, const Interval& w) { return start < w.end && end > w.start; }

    struct OpenStep {
        HeldRange range;
        int64_t number = -1;
        int64_t seenAtNs = 0;      // steady clock, when its range arrived
        int64_t cpuDoneAtNs = -1;  // steady clock, when condition 1 held
    };

    bool isStepRange(const RangeRow& row);
    void saw(TimeNs t);
    uint64_t launchesWaiting(const OpenStep& step) const;
    void close(const StepHandler& handler, bool complete);
    void buildCapture(const OpenStep& step, TimeNs slotEnd);
    // Only right after buildCapture(step, slotEnd): it reads what that found.
    void recordStep(const OpenStep& step, TimeNs slotEnd, bool complete, StepRows& out);
    void prune();
    void enforceRowLimit(const StepHandler& handler);
    // CPU rows that start before cpuFloor() came after their step closed;
    // GPU rows that end before gpuFloor() overlap no step still to close.
    TimeNs cpuFloor() const;
    TimeNs gpuFloor() const;
    uint32_t localName(uint32_t id);
    // A held kernel's row with its names' views (the held row has only their ids).
    KernelRow kernelRow(const Held<KernelRow>& held) const;

    std::regex stepPattern_;
    AssemblerLimits limits_;
    StringTable names_;
    std::unordered_set<std::string> otherRangeNames_;  // range names that are not steps
    HeldRows rows_;
    std::deque<OpenStep> open_;  // by range start
    // Held GPU rows per correlation id, in a window of recent ids (a map
    // would cost an allocation per kernel): an id 2^18 newer takes the slot.
    class GpuRecordCount {
    public:
        GpuRecordCount() : ids_(kSlots, 0), counts_(kSlots, 0) {}
        void add(uint32_t id) {
            const size_t s = id & (kSlots - 1);
            if (ids_[s] != id) ids_[s] = id, counts_[s] = 0;
            if (counts_[s] < UINT16_MAX) ++counts_[s];
        }
        void remove(uint32_t id) {
            const size_t s = id & (kSlots - 1);
            if (ids_[s] == id && counts_[s] > 0) --counts_[s];
        }
        bool contains(uint32_t id) const {
            const size_t s = id & (kSlots - 1);
            return ids_[s] == id && counts_[s] > 0;
        }
        void clear() { std::fill(counts_.begin(), counts_.end(), 0); }

    private:
        static constexpr size_t kSlots = size_t{1} << 18;
        std::vector<uint32_t> ids_;
        std::vector<uint16_t> counts_;
    } gpuRecords_;
    std::vector<uint64_t> capturingThreads_;  // inside cudaStreamBeginCapture/EndCapture
    std::string_view lastApiName_;            // into names_
    uint32_t lastApiId_ = kNoId;
    ApiCallRole lastApiRole_ = ApiCallRole::Other;
    Counters counters_;

    TimeNs newest_ = INT64_MIN;          // the latest timestamp seen
    TimeNs closedSlotEnd_ = INT64_MIN;   // CPU rows before this belong to closed steps
    TimeNs closedRangeEnd_ = INT64_MIN;  // the last closed step's range end
    int64_t newestStep_ = -1, firstWholeStep_ = -1;
    bool sawSteps_ = false;
    uint64_t rowsSeen_ = 0;

    std::map<uint32_t, GpuInfo> gpus_;
    std::map<std::tuple<uint64_t, uint32_t, uint32_t>, std::string> streamNames_;
    std::map<uint64_t, std::string> threadNames_;
    uint64_t descriptionsVersion_ = 0;

    // The capture handed to the handler, and name ids in it by stream name id.
    Capture capture_;
    std::vector<uint32_t> localNames_;
    std::vector<uint32_t> localNamesGeneration_;
    uint32_t generation_ = 0;
    // Scratch: the correlation ids launched in the closing step, as a bitmap
    // from the lowest (CUPTI hands ids out from a counter: dense).
    struct IdSet {
        uint32_t base = 0;
        std::vector<uint8_t> bits;
        std::vector<uint32_t> sparse;
        void assign(const std::vector<uint32_t>& ids);
        bool contains(uint32_t id) const {
            if (!sparse.empty()) return std::binary_search(sparse.begin(), sparse.end(), id);
            return id >= base && id - base < bits.size() && bits[id - base];
        }
    } claimed_;
    IdSet slotCalls_;  // the correlation ids called in the closing step's slot
    std::vector<uint32_t> slotIds_;
    // Scratch, from buildCapture() for recordStep(): the held kernels a
    // record of the step takes (indices into rows_.kernels).
    std::vector<uint32_t> recordKernels_;
    StepRows scratchRows_;  // record(): the step's rows before they are copied
    // Scratch, from buildCapture() for recordStep(): the held calls that
    // start in the closing step's range or slot (indices into rows_.apiCalls).
    std::vector<uint32_t> slotCallRows_;
    // Scratch: the closing step's kernels per device, (start, held index).
    std::vector<std::vector<std::pair<TimeNs, uint32_t>>> kernelOrder_;
    std::vector<std::pair<TimeNs, uint32_t>> sortScratch_;
    std::vector<size_t> sortRuns_;
    std::vector<uint32_t> scratchIds_;
    // Scratch: the closing step's GPU window per device (CUDA ordinals are small).
    struct DeviceWindows {
        std::vector<Interval> byDevice;  // empty = none
        void clear() { byDevice.clear(); }
        void widen(uint32_t device, TimeNs start, TimeNs end) {
            if (device >= 4096) return;
            if (device >= byDevice.size()) byDevice.resize(device + 1);
            Interval& w = byDevice[device];
            w = w.empty() ? Interval{start, end} : Interval{std::min(w.start, start), std::max(w.end, end)};
        }
        const Interval* find(uint32_t device) const {
            return device < byDevice.size() && !byDevice[device].empty() ? &byDevice[device] : nullptr;
        }
    } windows_;
};

}  // namespace osc::agent::live

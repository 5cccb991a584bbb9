// The live half of the agent: the rows of the record stream (a RowTap on
// the capture session) go through the step assembler; each closed step is
// measured by the analyzer (step_metrics.h), counted into the telemetry,
// kept in the look-back ring (step_ring.h), offered to the step capture in
// progress, and checked against --capture-when. Rows and the assembler are
// the writer thread's; the control thread arms and cancels step captures,
// dumps the ring and reads progress, under a mutex the writer thread takes
// once per flush cycle. The ring's records name rows in the assembler's
// queues, which the writer thread fills without that mutex: before the
// control thread reads them, the writer thread gives them their rows.
#pragma once

#include "agent/core/capture_session.h"
#include "agent/core/process_identity.h"
#include "agent/core/row_tap.h"
#include "agent/live/capture_condition.h"
#include "agent/live/step_assembler.h"
#include "agent/live/step_capture.h"
#include "agent/live/step_ring.h"
#include "agent/live/telemetry.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace osc::agent::live {

struct LiveSettings {
    AnalysisSettings analysis;  // step pattern, communication kernels
    AssemblerLimits limits;
    std::optional<CaptureCondition> condition;  // --capture-when
    int conditionSteps = 10;                    // --capture-steps
    double conditionCooldownS = 600;            // --capture-cooldown
    std::string conditionOutputDir;
    bool conditionPartial = false;
    std::string stepLogPath;  // OVERLAPSCOPE_STEP_LOG: one JSON line per closed step and GPU
    // The look-back ring: the last `lookbackSteps` steps, at most
    // `lookbackMaxRows` rows (OVERLAPSCOPE_LOOKBACK_STEPS, _MAX_ROWS).
    size_t lookbackSteps = 0;
    size_t lookbackMaxRows = 200'000;
};

// A --capture-when capture began: the steps it holds, from `firstStep`, for
// the job's other ranks to capture too (trigger_relay.h).
struct CaptureTrigger {
    int64_t firstStep = -1, triggerStep = -1;
    int steps = 0;
};

class LivePipeline final : public RowTap {
public:
    struct Hooks {
        // A fresh capture file name in `dir` (any thread; must not block long).
        std::function<std::string(const std::string& dir)> capturePath;
        // A step capture ended (writer thread; must not block).
        std::function<void(const StepCaptureProgress& progress, bool partial)> captureEnded;
        // --capture-when started a capture (writer thread; must not block).
        std::function<void(const CaptureTrigger& trigger)> triggered;
    };

    // `telemetry` may be null (step captures without metrics). Throws
    // std::invalid_argument for an invalid step pattern.
    LivePipeline(LiveSettings settings, ProcessIdentity who, Telemetry* telemetry, Hooks hooks);
    ~LivePipeline() override;

    void streamStarted(const DecodeContext& context, const std::map<std::string, std::string>& sourceMeta) override;
    void cycleEnded(uint64_t droppedRecords) override;
    void streamEnded(CaptureEnd how, uint64_t droppedRecords) override;

    void addKernel(const KernelRow& r) override { assembler_.addKernel(r); }
    void addCopy(const CopyRow& r) override { assembler_.addCopy(r); }
    void addMemset(const MemsetRow& r) override { assembler_.addMemset(r); }
    void addSync(const SyncRow& r) override { assembler_.addSync(r); }
    void addApiCall(const ApiCallRow& r) override { assembler_.addApiCall(r); }
    void addRange(const RangeRow& r) override { assembler_.addRange(r); }
    void addCollective(const CollectiveRow& r) override { assembler_.addCollective(r); }
    void addGpu(const GpuInfo& g) override { assembler_.addGpu(g); }
    void addCudaEvent(const CudaEventRow& r) override { assembler_.addCudaEvent(r); }
    void addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name) override {
        assembler_.addStreamName(globalPid, deviceId, streamId, name);
    }
    void addThreadName(uint64_t globalTid, std::string_view name) override {
        assembler_.addThreadName(globalTid, name);
    }
    uint32_t stringId(std::string_view text) override { return assembler_.stringId(text); }

    // Control thread. A step capture of `plan` from the running stream
    // (its first steps from the look-back ring when they have closed);
    // false with `error` when one is already in progress or its step has
    // passed and left the ring. A plan from another rank's trigger also
    // restarts the --capture-when cooldown here.
    bool arm(StepCapturePlan plan, std::string& error);
    // Control thread: writes the steps the look-back ring holds into a new
    // capture at `path` now; false with `error` when it holds none.
    bool dump(const std::string& path, StepCaptureProgress& written, std::string& error);
    // Ends the step capture in progress: closes what it wrote, after the
    // rows that came since its last whole step and `open`, the NCCL
    // operations still running (CLOCK_REALTIME times, as the plugin gives
    // them). The rows are the writer thread's: it does this at the end of
    // its cycle, which this call waits for (a fraction of the commit interval).
    bool cancel(std::string& error, std::vector<PendingCollective> open = {});
    // The capture in progress or the last one; nullopt before the first.
    std::optional<StepCaptureProgress> captureProgress() const;
    bool captureActive() const;
    // Set by the agent while a wall-clock capture runs: --capture-when waits.
    void setFileCaptureRunning(bool running) { fileCapture_ = running; }

    // What the stream has shown so far (any thread).
    struct Sight {
        bool streaming = false;
        bool sawSteps = false;
        int64_t newestStep = -1, firstWholeStep = -1, lastClosedStep = -1;
        uint64_t rowsSeen = 0, stepsClosed = 0;
        double lastStepSeconds = 0;
        int64_t lookbackFirst = -1, lookbackLast = -1;  // the steps the ring holds
    };
    Sight sight() const;

private:
    void onStep(const ClosedStep& step);
    // Starts the --capture-when capture at `step`: the ring's steps, then the next.
    void startConditionCapture(const ClosedStep& step);
    // Offers the ring's steps from `atStep` on (all with nullopt) to
    // capture_, a new file starting with `describe`'s rows.
    void offerHeld(std::optional<int64_t> atStep, const std::function<void(RowSink&)>& describe);
    void noteIdleBetweenSteps(std::vector<DeviceStepMetrics>& metrics);
    // Writer thread (mutex_ held): the cancel asked for, with its tail.
    void cancelWithTail();
    void publishHealth(uint64_t droppedRecords);
    // Lets the assembler drop the rows no record of the ring names.
    void releaseRetained();
    // The ring's oldest record that names rows copies them (StepRing::ownOldest).
    bool ownOldestRecord();
    // Control thread (mutex_ held): waits until every record of the ring
    // holds its rows (the writer thread copies them at the end of its cycle;
    // the queues they name are its own, changed without the lock); false
    // with `error` when it does not answer in 5 s.
    bool ringRowsOwned(std::unique_lock<std::mutex>& lock, std::string& error);
    void finishCapture();
    void logStep(const DeviceStepMetrics& m);
    // Copies what status requests read into the view (mutex_ held).
    void publishView();

    const LiveSettings settings_;
    const ProcessIdentity who_;
    Telemetry* telemetry_;
    Hooks hooks_;
    StepAssembler assembler_;                   // writer thread
    StepRing ring_;                             // writer thread, or the control thread under mutex_
    RecordedStep recorded_;                     // scratch: a record's rows copied for a capture
    std::map<uint32_t, TimeNs> lastWindowEnd_;  // per device, this stream
    std::unique_ptr<ConditionWatch> watch_;
    FILE* stepLog_ = nullptr;
    bool metricsBroken_ = false;

    // The writer thread holds mutex_ for a whole flush cycle (steps are
    // measured and written under it); status requests, which must not wait
    // for that, read a copy under viewMutex_.
    mutable std::mutex mutex_;
    DecodeContext stream_;
    DescriptionRows descriptions_;  // the assembler's, as of the last cycle (for dump)
    uint64_t descriptionsVersion_ = ~uint64_t{0};
    std::map<std::string, std::string> sourceMeta_;
    std::unique_ptr<StepCapture> capture_;
    std::optional<std::vector<PendingCollective>> cancel_;  // asked by cancel(), done by the writer thread
    std::condition_variable cancelled_;
    bool ownRequested_ = false;  // asked by ringRowsOwned(), done by the writer thread
    std::condition_variable ringOwned_;
    std::optional<StepCaptureProgress> lastProgress_;
    uint64_t stepCaptures_ = 0, conditionCaptures_ = 0;
    std::atomic<bool> fileCapture_{false};
    Sight sight_;

    mutable std::mutex viewMutex_;
    Sight sightView_;
    std::optional<StepCaptureProgress> progressView_;
    bool activeView_ = false;
};

}  // namespace osc::agent::live

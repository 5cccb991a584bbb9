// The live half of the agent: the rows of the record stream (a RowTap on
// the capture session) go through the step assembler; each closed step is
// measured by the analyzer (step_metrics.h), counted into the telemetry,
// offered to the step capture in progress, and checked against
// --capture-when. Rows and the assembler are the writer thread's; the
// control thread arms and cancels step captures and reads progress, under
// a mutex the writer thread takes once per flush cycle.
#pragma once

#include "agent/core/process_identity.h"
#include "agent/core/row_tap.h"
#include "agent/live/capture_condition.h"
#include "agent/live/step_assembler.h"
#include "agent/live/step_capture.h"
#include "agent/live/telemetry.h"

#include <atomic>
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
};

class LivePipeline final : public RowTap {
public:
    struct Hooks {
        // A fresh capture file name in `dir` (any thread; must not block long).
        std::function<std::string(const std::string& dir)> capturePath;
        // A step capture ended (writer thread; must not block).
        std::function<void(const StepCaptureProgress& progress, bool partial)> captureEnded;
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

    // Control thread. A step capture of `plan` from the running stream;
    // false with `error` when one is already in progress or its step has
    // passed.
    bool arm(StepCapturePlan plan, std::string& error);
    // Ends the step capture in progress (closing what it wrote).
    bool cancel(std::string& error);
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
    };
    Sight sight() const;

private:
    void onStep(const ClosedStep& step);
    void publishHealth(uint64_t droppedRecords);
    void finishCapture();
    void logStep(const DeviceStepMetrics& m);
    // Copies what status requests read into the view (mutex_ held).
    void publishView();

    const LiveSettings settings_;
    const ProcessIdentity who_;
    Telemetry* telemetry_;
    Hooks hooks_;
    StepAssembler assembler_;  // writer thread
    std::unique_ptr<ConditionWatch> watch_;
    FILE* stepLog_ = nullptr;
    bool metricsBroken_ = false;

    // The writer thread holds mutex_ for a whole flush cycle (steps are
    // measured and written under it); status requests, which must not wait
    // for that, read a copy under viewMutex_.
    mutable std::mutex mutex_;
    DecodeContext stream_;
    std::map<std::string, std::string> sourceMeta_;
    std::unique_ptr<StepCapture> capture_;
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

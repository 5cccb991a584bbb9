// A capture of whole steps (`attach --steps N [--at-step S]`, and
// `--capture-when`): it waits for its first step, then writes that step and
// the next N-1 as they close, from the rows the step assembler holds, into a
// capture file of the usual format. Nothing is cut at a wall-clock instant:
// the file holds the steps' ranges, the API calls and other rows of their CPU
// slots, their GPU work, and whatever else ran in their GPU windows, so
// `overlapscope report` on it gives the steps the figures the live metrics
// gave them. Writer thread only, except where said.
#pragma once

#include "agent/core/activity_source.h"
#include "agent/core/process_identity.h"
#include "agent/live/recorded_step.h"
#include "analyzer/capture/capture_writer.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace osc::agent::live {

struct StepCapturePlan {
    int steps = 1;
    std::optional<int64_t> atStep;  // else the first step that starts at or after `notBefore`
    TimeNs notBefore = 0;           // on the stream's timeline
    std::string path;
    bool partial = false;
    std::string trigger;  // "attach", "capture-when", "dump", or who asked
    // A trigger of another rank: when step `atStep` has left the look-back
    // ring already, start from the oldest step it holds (rather than fail).
    bool fromOldestHeld = false;
};

// What `ps` shows of a step capture.
struct StepCaptureProgress {
    std::string state;  // "waiting", "capturing", "done", "failed", "stopped"
    int requested = 0, written = 0;
    int64_t first = -1;  // the first step's number once known
    int64_t last = -1;   // the last step written
    std::optional<int64_t> atStep;
    std::string path, error;
};

class StepCapture {
public:
    StepCapture(StepCapturePlan plan, const ProcessIdentity& who, const DecodeContext& stream,
                std::map<std::string, std::string> sourceMeta);
    ~StepCapture();
    StepCapture(const StepCapture&) = delete;
    StepCapture& operator=(const StepCapture&) = delete;

    // A step closed (or comes from the look-back ring). Takes it when it is
    // one of ours, the file starting with `describe`'s rows; true once the
    // capture has ended (done or failed).
    bool offer(const RecordedStep& step, const std::function<void(RowSink&)>& describe);
    // The stream ended or the capture was cancelled: closes what was
    // written, after `tail`'s rows when it has begun (a stop by request
    // keeps what came after the last whole step: a step that never ended,
    // work that never finished).
    void end(CaptureEnd how, const std::string& why, const std::function<void(RowSink&)>& tail = {});
    // The first captured step's range start (once it has begun).
    TimeNs firstRangeStart() const { return firstRangeStart_; }
    bool finished() const;
    const StepCaptureProgress& progress() const { return progress_; }
    const StepCapturePlan& plan() const { return plan_; }

private:
    void open(const std::function<void(RowSink&)>& describe);
    void fail(const std::string& why);
    void closeFile(CaptureEnd how);

    StepCapturePlan plan_;
    ProcessIdentity who_;
    DecodeContext stream_;
    std::map<std::string, std::string> sourceMeta_;
    StepCaptureProgress progress_;
    std::unique_ptr<CaptureWriter> writer_;
    int incomplete_ = 0;
    TimeNs firstRangeStart_ = 0;
};

}  // namespace osc::agent::live

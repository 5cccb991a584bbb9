#include "agent/live/step_capture.h"

#include "agent/live/clocks.h"
#include "analyzer/capture/schema.h"

#include <unistd.h>
#include <cstdio>

namespace osc::agent::live {

StepCapture::StepCapture(StepCapturePlan plan, const ProcessIdentity& who, const DecodeContext& stream,
                         std::map<std::string, std::string> sourceMeta)
    : plan_(std::move(plan)), who_(who), stream_(stream), sourceMeta_(std::move(sourceMeta)) {
    progress_.state = "waiting";
    progress_.requested = plan_.steps;
    progress_.atStep = plan_.atStep;
    progress_.path = plan_.path;
}

StepCapture::~StepCapture() {
    if (writer_) closeFile(CaptureEnd::ProcessExit);
}

bool StepCapture::finished() const {
    return progress_.state == "done" || progress_.state == "failed" || progress_.state == "stopped";
}

void StepCapture::fail(const std::string& why) {
    progress_.state = "failed";
    progress_.error = why;
    std::fprintf(stderr, "overlapscope-agent: step capture: %s\n", why.c_str());
    if (writer_) closeFile(CaptureEnd::Stopped);
}

bool StepCapture::offer(const RecordedStep& step, const std::function<void(RowSink&)>& describe) {
    if (finished()) return true;
    if (!writer_) {
        if (plan_.atStep) {
            if (step.number < 0) {
                fail("step range '" + step.name + "' has no number to compare with --at-step");
                return true;
            }
            if (step.number > *plan_.atStep && !plan_.fromOldestHeld) {
                fail("step " + std::to_string(*plan_.atStep) + " was not seen (the next step closed was " +
                     std::to_string(step.number) + ")");
                return true;
            }
            if (step.number < *plan_.atStep) return false;
            if (step.number > *plan_.atStep)
                std::fprintf(stderr,
                             "overlapscope-agent: step capture: step %lld had left the look-back ring; capturing "
                             "from step %lld\n",
                             static_cast<long long>(*plan_.atStep), static_cast<long long>(step.number));
            if (step.rangeStart < 0) {
                fail("step " + std::to_string(step.number) + " began before this agent was recording");
                return true;
            }
        } else if (step.rangeStart < plan_.notBefore) {
            return false;
        }
        try {
            open(describe);
        } catch (const std::exception& e) {
            fail(e.what());
            return true;
        }
        progress_.first = step.number;
        progress_.state = "capturing";
        firstRangeStart_ = step.rangeStart;
    }
    try {
        WriterRowSink sink(*writer_);
        step.writeTo(sink, progress_.written > 0);
        writer_->commit();
    } catch (const std::exception& e) {
        fail(e.what());
        return true;
    }
    ++progress_.written;
    progress_.last = step.number;
    if (!step.complete) ++incomplete_;
    if (progress_.written >= plan_.steps) {
        closeFile(CaptureEnd::Stopped);
        progress_.state = "done";
        return true;
    }
    return false;
}

void StepCapture::open(const std::function<void(RowSink&)>& describe) {
    namespace m = schema::meta;
    writer_ = CaptureWriter::create(plan_.path, stream_.originUtcNs, CaptureWriterOptions{});
    auto set = [&](std::string_view k, const std::string& v) { writer_->setMeta(k, v); };
    set(m::kHost, who_.host);
    set(m::kPid, std::to_string(who_.pid));
    set(m::kRank, std::to_string(who_.rank));
    set(m::kLocalRank, std::to_string(who_.localRank));
    set(m::kWorldSize, std::to_string(who_.worldSize));
    set(m::kCommandLine, who_.commandLine);
    // Time 0 of the file is the start of the agent's record stream, whose
    // timeline the rows keep.
    set(m::kCaptureStartUtcNs, std::to_string(stream_.originUtcNs));
    set("capture_start_source_ns", std::to_string(stream_.sourceOriginNs));
    set("step_capture_trigger", plan_.trigger);
    set("step_capture_steps_requested", std::to_string(plan_.steps));
    if (plan_.atStep) set("step_capture_at_step", std::to_string(*plan_.atStep));
    for (const auto& [k, v] : sourceMeta_) set(k, v);
    writer_->addProcess(ProcessRow{stream_.globalPid, who_.pid, who_.executable});
    WriterRowSink sink(*writer_);
    if (describe) describe(sink);
    writer_->commit();
}

void StepCapture::closeFile(CaptureEnd how) {
    if (!writer_) return;
    try {
        writer_->setMeta(schema::meta::kCaptureStopUtcNs, std::to_string(wallNowNs()));
        writer_->setMeta("step_capture_steps_written", std::to_string(progress_.written));
        writer_->setMeta("step_capture_first_step", std::to_string(progress_.first));
        writer_->setMeta("step_capture_incomplete_steps", std::to_string(incomplete_));
        writer_->setMeta(schema::meta::kDroppedRecords, "0");
        writer_->close(how, /*buildIndexes=*/how == CaptureEnd::Stopped);
    } catch (const std::exception& e) {
        progress_.state = "failed";
        progress_.error = e.what();
        std::fprintf(stderr, "overlapscope-agent: %s\n", e.what());
    }
    writer_.reset();
}

void StepCapture::end(CaptureEnd how, const std::string& why, const std::function<void(RowSink&)>& tail) {
    if (finished()) return;
    const bool wrote = writer_ != nullptr;
    if (wrote && tail) {
        try {
            WriterRowSink sink(*writer_);
            tail(sink);
            writer_->commit();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "overlapscope-agent: step capture: %s\n", e.what());
        }
    }
    closeFile(how);
    progress_.state = "stopped";
    progress_.error = why;
    if (!wrote) progress_.path.clear();  // no file was made
}

}  // namespace osc::agent::live

// Where a running stream's decoded rows go besides its capture file: the
// live pipeline (agent/live), which turns them into per-step metrics and
// step captures. CaptureSession hands every row to its tap on the writer
// thread, after the file (if any) got it, and tells it when the stream
// starts, after each flush cycle, and when it ends.
#pragma once

#include "agent/core/activity_source.h"
#include "analyzer/capture/capture_writer.h"
#include "analyzer/capture/row_sink.h"

#include <cstdint>
#include <map>
#include <string>

namespace osc::agent {

class RowTap : public RowSink {
public:
    // Before the source starts: the rows that follow are on `context`'s
    // timeline. `sourceMeta` is the source's OVERLAPSCOPE_META (versions).
    virtual void streamStarted(const DecodeContext& context, const std::map<std::string, std::string>& sourceMeta) = 0;
    // After each flush cycle (every half commit interval); `droppedRecords`:
    // records the stream lost so far.
    virtual void cycleEnded(uint64_t droppedRecords) = 0;
    // After the last row.
    virtual void streamEnded(CaptureEnd how, uint64_t droppedRecords) = 0;
};

}  // namespace osc::agent

// What HTA reads of a trace file beyond what overlapscope's model keeps, read
// from the file's text by the facade (overlapscope.hta) itself:
// - baseTimeNanoseconds, to round the trace's own timestamps as HTA's
//   float64 arithmetic does;
// - its first event, HTA's row 0: HTA's idle-time breakdown joins a kernel
//   whose launch is not in the trace to that row (hta/common/trace.py,
//   transform_correlation_to_index: index_correlation 0);
// - which files of a directory are profiler traces at all, and which hold
//   MTIA events, which overlapscope does not read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace osc::python {

struct TraceHead {
    int64_t baseNs = 0;  // baseTimeNanoseconds, 0 without one
    // The first element of traceEvents, when it is a row of HTA's table (a
    // complete event with "dur" and "cat", cat not "Trace"; HTA drops rows
    // without either): its start in the trace's own ns, and whether HTA
    // counts it as GPU work (a stream and a correlation of 0 or more).
    struct Row {
        int64_t tsNs = 0;
        bool gpu = false;
        int64_t correlation = -1;
    };
    std::optional<Row> firstRow;
};

// Reads the head of the file and, with `baseFromTail`, where an older
// PyTorch wrote baseTimeNanoseconds after the events, its tail (the whole
// file is inflated again). Throws CaptureError when it cannot be read.
TraceHead readTraceHead(const std::string& path, bool baseFromTail);

// What a file HTA would load (a .json or .gz in the directory) is:
// "trace" (a PyTorch profiler trace: it has "traceEvents"), "capture" (an
// overlapscope capture or Nsight Systems export), or a few words saying what
// else it is ("a PyTorch execution trace", "not a profiler trace: ...").
std::string traceFileKind(const std::string& path);

// Whether a trace holds MTIA device events (mtia_ccp_events, mtia_runtime),
// which overlapscope does not read: reads the whole file unless it finds one.
bool holdsMtiaEvents(const std::string& path);

}  // namespace osc::python

// What overlapscope.hta.TraceAnalysis computes on: a loaded capture seen the
// way Holistic Trace Analysis sees a trace, per rank (HTA's hta/common/trace.py
// and trace_parser.py, v0.6):
//
// - one rank per capture process (a PyTorch trace file): its rank, or 0
//   when the file names none;
// - fractional-microsecond times rounded inward to whole microseconds (start
//   up, end down), so a sub-microsecond event can end before it starts,
//   unless HTA_DISABLE_NS_ROUNDING=1 asked for exact times; rounded as HTA
//   rounds them, on the float64 values of the trace's own timestamps (a
//   quarter microsecond apart for epoch timestamps); only PyTorch traces
//   are rounded, HTA reads no other format;
// - with two or more ProfilerStep#N names in the job, only GPU work launched
//   by host calls that start before the last ProfilerStep (or, with
//   include_last_profiler_step, that end by its end) is kept;
// - GPU events are kernels, copies, memsets and syncs on a stream; their
//   type (COMMUNICATION, MEMORY, COMPUTATION, OTHER) comes from HTA's name
//   patterns, not from ours.
//
// Unions follow HTA's merge_kernel_intervals and its sweeps literally, so
// the inward rounding's negative-length events count as HTA counts them.
// Times are kept in ns; tables give microseconds, HTA's unit.
#pragma once

#include "analyzer/capture/model.h"

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace osc::python {

namespace py = pybind11;

enum class HtaKernelType : uint8_t { Communication = 0, Memory = 1, Computation = 2, Other = 3 };
enum class HtaEventKind : uint8_t { Kernel = 0, Memcpy = 1, Memset = 2, Sync = 3 };

// hta/utils/utils.py get_kernel_type on a name.
HtaKernelType htaKernelType(std::string_view name);

struct HtaOptions {
    bool includeLastProfilerStep = false;
    bool roundToMicroseconds = true;  // HTA's default; HTA_DISABLE_NS_ROUNDING=1 turns it off
    // TraceAnalysis(trace_files={rank: file}): the rank of each file, by path.
    std::unordered_map<std::string, int> rankOfFile;
    // Each PyTorch trace's baseTimeNanoseconds (0 without one), by path: a
    // trace's own timestamps are needed to round them as HTA's float64 does.
    std::unordered_map<std::string, int64_t> traceTimeBase;
};

struct HtaRank {
    int rank = 0;
    // GPU events kept, in start order.
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> stream, correlation, name;  // name: index into HtaTrace names
    std::vector<HtaEventKind> kind;
    std::vector<HtaKernelType> type;
    std::vector<std::optional<TimeNs>> launchStart;  // the host call with the same correlation
    // Host runtime and driver calls kept, in start order.
    std::vector<TimeNs> callStart, callEnd;
    std::vector<uint32_t> callName, callCorrelation;
};

class HtaTrace {
public:
    HtaTrace(const Capture& capture, const HtaOptions& options);

    std::vector<int> ranks() const;
    std::vector<std::string> warnings() const { return warnings_; }

    // Per rank: |comm ∩ comp| and |comm| (ns) as get_comm_comp_overlap sums them.
    py::dict overlap() const;
    // Per rank: idle, compute and span of all GPU events (get_temporal_breakdown).
    py::dict temporal() const;
    // Per rank and kernel-type combination ("COMPUTATION overlapping
    // COMMUNICATION"): the time in whole us HTA's breakdown sums.
    py::dict kernelTypeTime(bool includeMemory) const;
    // Every GPU event kept: rank, kind, stream, name, type, HTA's duration (us).
    py::dict gpuEvents() const;
    // get_idle_time_breakdown's per-kernel gaps on one rank: stream, the gap
    // to the previous event on the stream (us; NaN for the first) and its
    // category (0 host wait, 1 kernel wait, 2 other).
    py::dict idleIntervals(int rank, double consecutiveKernelDelayUs) const;
    // get_cuda_kernel_launch_stats' rows on one rank.
    py::dict launchStats(int rank, bool includeMemoryEvents) const;

private:
    const HtaRank& rankData(int rank) const;
    uint32_t nameId(std::string_view name);

    HtaOptions options_;
    std::vector<HtaRank> ranks_;  // sorted by rank
    std::vector<std::string> names_;
    std::unordered_map<std::string, uint32_t> nameIds_;
    std::vector<std::string> warnings_;
};

}  // namespace osc::python

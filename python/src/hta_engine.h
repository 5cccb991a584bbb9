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
// Host rows of HTA's table (GPU-side annotations have no stream there, so
// HTA counts them with the host's).
enum class HtaHostKind : uint8_t { Runtime = 0, Driver = 1, UserAnnotation = 2, GpuUserAnnotation = 3, CpuOp = 4 };

// hta/utils/utils.py get_kernel_type on a name.
HtaKernelType htaKernelType(std::string_view name);

// "COMMUNICATION", "MEMORY", "COMPUTATION", "OTHER".
const char* htaKernelTypeName(HtaKernelType type);

// cudaLaunchKernel_v7000 (Nsight Systems, our captures) is HTA's cudaLaunchKernel.
std::string_view withoutVersion(std::string_view name);

struct HtaOptions {
    bool includeLastProfilerStep = false;
    // HTA's TraceAnalysis drops what the last ProfilerStep launched; its
    // TraceDiff (LabeledTrace: parse_traces alone) keeps every row.
    bool filterSteps = true;
    bool roundToMicroseconds = true;  // HTA's default; HTA_DISABLE_NS_ROUNDING=1 turns it off
    // TraceAnalysis(trace_files={rank: file}): the rank of each file, by path.
    std::unordered_map<std::string, int> rankOfFile;
};

// A duration in HTA's unit, us.
inline double htaUs(TimeNs ns) { return static_cast<double>(ns) / 1000.0; }

// numpy's round to `decimals` places (what pandas' round calls): rint of the
// value times 10^decimals, over 10^decimals (to even at a half).
double roundLikeNumpy(double value, int decimals);

// A group of GPU events HTA's merge_kernel_intervals joins: its first start to its largest end.
struct HtaSpan {
    TimeNs start, end;
};

// One rank's unions, which the overlap and breakdown sweeps read: made once,
// on the thread that read the rank's file, instead of on every call. of():
// one of the three types the sweeps read (OTHER has no union of its own).
struct HtaUnions {
    std::vector<HtaSpan> all, communication, computation, memory;
    const std::vector<HtaSpan>& of(HtaKernelType type) const {
        return type == HtaKernelType::Communication ? communication
               : type == HtaKernelType::Computation ? computation
                                                    : memory;
    }
};

struct HtaRank {
    int rank = 0;
    std::string path;  // the trace file
    // GPU events kept, in start order.
    std::vector<TimeNs> start, end;
    std::vector<uint32_t> stream, correlation, name;  // name: index into HtaTrace names
    std::vector<uint32_t> device;                     // the trace's pid for GPU rows
    std::vector<HtaEventKind> kind;
    std::vector<HtaKernelType> type;
    // The host call with the same correlation; a kernel whose call is not in
    // the trace gets the time of the trace's first row, as HTA's join does
    // (its index 0), when HTA keeps that row.
    std::vector<std::optional<TimeNs>> launchStart;
    std::vector<int> iteration;  // the ProfilerStep of the launching call, -1 none
    std::vector<int64_t> bytes;  // copies and memsets; -1 otherwise
    // Kineto's "memory bandwidth (GB/s)" of copies and memsets, from the
    // unrounded duration; 0 otherwise, HTA's default.
    std::vector<double> bandwidth;
    // Host rows kept (calls, annotations, operators), in start order.
    std::vector<TimeNs> hostStart, hostEnd;
    std::vector<uint32_t> hostName, hostCorrelation;  // correlation 0: none
    std::vector<uint64_t> hostThread;                 // pid << 24 | tid
    std::vector<HtaHostKind> hostKind;
    std::vector<int> hostIteration;
    // dtypes HTA's parser gives this file's integer columns (to_numeric's
    // downcast over every row, -1 where a row has none): "int8" ... "int64".
    std::string streamDtype = "int64", correlationDtype = "int64";
    HtaUnions unions;  // of the GPU events above (htaUnionsOf)
};

// The unions of a rank's GPU events, as HTA's merge_kernel_intervals makes them.
HtaUnions htaUnionsOf(const HtaRank& rank);

// A row of HTA's sweeps over merged groups: +value at a group's start,
// -value at its end; a row lasts until the next one.
struct HtaStatusEvent {
    TimeNs time;
    int delta;
};
// The sweep's rows over each (groups, value), sorted by time stably (ties
// keep the order the groups are listed in), as HTA sorts them.
std::vector<HtaStatusEvent> htaStatusEvents(const std::vector<std::pair<const std::vector<HtaSpan>*, int>>& typed);

// Names of a view (kernel, call and annotation names), each kept once.
struct HtaNames {
    std::vector<std::string> names;
    std::unordered_map<std::string, uint32_t> ids;
    std::vector<uint32_t> ofString;  // capture string id -> index (kNoId: not yet)
    uint32_t id(std::string_view name);
    // By the capture's string id, each looked up once (kernel names run to
    // hundreds of characters, a million times).
    uint32_t id(const StringTable& strings, uint32_t stringId);
};

// One capture's processes as HTA sees them, made on the thread that read
// it (overlapscope.hta reads files on several threads and sees each as soon
// as it is read), its names its own until HtaTrace joins the views.
struct HtaCaptureView {
    std::vector<HtaRank> ranks;  // name, hostName: indices into names
    // A process that names no rank, and is no PyTorch trace, is numbered by
    // its place among the job's processes: its place in this capture.
    std::vector<std::optional<size_t>> numberedByPlace;
    size_t processes = 0;
    HtaNames names;
    TimeNs origin = INT64_MAX;  // the first event, rounded
};

// The ProfilerStep#N names a capture holds: HTA filters the last step's
// work only when the job's hold two or more.
std::vector<std::string> profilerStepNames(const Capture& capture);
// `filter`: whether the job's ProfilerStep names are two or more (and
// filtering was asked for).
HtaCaptureView seeAsHta(const Capture& capture, const HtaOptions& options, bool filter);

class HtaTrace {
public:
    // The job's captures seen (seeAsHta), in file order; all share the
    // traces' own clock.
    HtaTrace(std::vector<HtaCaptureView> views, const HtaOptions& options);

    std::vector<int> ranks() const;
    std::vector<std::string> warnings() const { return warnings_; }

    // get_comm_comp_overlap's table: per rank, |comm ∩ comp| / |comm| in percent.
    py::dict overlap() const;
    // get_temporal_breakdown's table: per rank, idle, compute and other time
    // over the span of the GPU events (us), and their shares in percent.
    py::dict temporal() const;
    // get_gpu_kernel_breakdown (hta_kernel_breakdown.cpp): "types", the
    // time by kernel-type combination ("COMPUTATION overlapping
    // COMMUNICATION") over the job, in whole us, with its percentage;
    // "kernels", per rank, type and name the statistics of the durations
    // (us) of groups of at most `numKernels` names, in the table's final
    // order and names; "folded", the per-name rows of the larger groups,
    // which HTA folds into "others" (hta.py).
    py::dict kernelBreakdown(bool includeMemory, int numKernels) const;
    // get_idle_time_breakdown's per-kernel gaps on one rank: stream, the gap
    // to the previous event on the stream (us; NaN for the first) and its
    // category (0 host wait, 1 kernel wait, 2 other).
    py::dict idleIntervals(int rank, double consecutiveKernelDelayUs) const;
    // get_idle_time_breakdown's sums over all streams of the given ranks:
    // part (the place of the rank in `ranks`), rank, stream, category and
    // the sum of its gaps (us) as pandas' group-by adds them; rows by part,
    // stream and category.
    py::dict idleSums(const std::vector<int>& ranks, double consecutiveKernelDelayUs) const;
    // get_cuda_kernel_launch_stats' rows on one rank.
    py::dict launchStats(int rank, bool includeMemoryEvents) const;
    // One rank's rows as HTA's table holds them (hta_frame.cpp): GPU rows,
    // then host rows; ts, dur and end in us from the job's first event.
    py::dict frame(int rank) const;
    // {"stream": dtype, "correlation": dtype} of one rank's file.
    py::dict dtypes(int rank) const;
    std::string path(int rank) const { return rankData(rank).path; }
    size_t gpuEventCount(int rank) const { return rankData(rank).start.size(); }
    // The job's first row in the trace's own us (HTA's min_ts): frame times + this = trace times.
    double traceOffsetUs(int rank) const;

private:
    const HtaRank& rankData(int rank) const;

    HtaOptions options_;
    std::vector<HtaRank> ranks_;  // sorted by rank
    std::vector<std::string> names_;
    TimeNs origin_ = 0;  // the job's first event (HTA's alignment), rounded
    std::vector<std::string> warnings_;
};

}  // namespace osc::python

// One rank as HTA's trace table holds it (hta/common/trace.py after
// load_traces): the rows HTA keeps, GPU rows first and then the host's, as
// its ProfilerStep filter leaves them; ts, dur and end in microseconds from
// the job's first row (HTA's alignment), whole when HTA rounds the file.
// overlapscope/hta.py ports HTA's group-bys onto it.
#include "python/src/columns.h"
#include "python/src/hta_engine.h"

namespace osc::python {
namespace {

const char* gpuCategory(HtaEventKind k) {
    switch (k) {
        case HtaEventKind::Kernel:
            return "kernel";
        case HtaEventKind::Memcpy:
            return "gpu_memcpy";
        case HtaEventKind::Memset:
            return "gpu_memset";
        case HtaEventKind::Sync:
            return "cuda_sync";
    }
    return "";
}

const char* hostCategory(HtaHostKind k) {
    switch (k) {
        case HtaHostKind::Runtime:
            return "cuda_runtime";
        case HtaHostKind::Driver:
            return "cuda_driver";
        case HtaHostKind::UserAnnotation:
            return "user_annotation";
        case HtaHostKind::GpuUserAnnotation:
            return "gpu_user_annotation";
        case HtaHostKind::CpuOp:
            return "cpu_op";
    }
    return "";
}

}  // namespace

py::dict HtaTrace::frame(int rank) const {
    const HtaRank& r = rankData(rank);
    const size_t gpu = r.start.size(), rows = gpu + r.hostStart.size();
    auto isGpu = [&](size_t i) { return i < gpu; };
    auto start = [&](size_t i) { return isGpu(i) ? r.start[i] : r.hostStart[i - gpu]; };
    auto end = [&](size_t i) { return isGpu(i) ? r.end[i] : r.hostEnd[i - gpu]; };
    // Each GPU row and its launching call point at each other (HTA's
    // index_correlation); a GPU row without one is 0, a host row without one -1.
    std::unordered_map<uint32_t, size_t> gpuRowOf, hostRowOf;
    for (size_t i = 0; i < gpu; ++i)
        if (r.correlation[i] != 0) gpuRowOf.emplace(r.correlation[i], i);
    for (size_t i = 0; i < r.hostStart.size(); ++i)
        if (r.hostCorrelation[i] != 0 &&
            (r.hostKind[i] == HtaHostKind::Runtime || r.hostKind[i] == HtaHostKind::Driver))
            hostRowOf.emplace(r.hostCorrelation[i], gpu + i);
    const bool whole = options_.roundToMicroseconds;  // rounded files: whole us, HTA's int64 ts

    // Numbered from 1: HTA's index_correlation is 0 for "no partner" (and
    // points at HTA's row 0, the file's first event, which is not a row here).
    Columns t(rows);
    t.add("index", [&](size_t i) { return i + 1; });
    CategoryColumn cat, name;
    for (size_t i = 0; i < rows; ++i) {
        if (isGpu(i)) {
            cat.pushText(gpuCategory(r.kind[i]));
            name.push(r.name[i], names_[r.name[i]]);
        } else {
            cat.pushText(hostCategory(r.hostKind[i - gpu]));
            name.push(r.hostName[i - gpu], names_[r.hostName[i - gpu]]);
        }
    }
    t.put("cat", cat.finish());
    t.put("name", name.finish());
    t.add("pid", [&](size_t i) -> int64_t {
        return isGpu(i) ? static_cast<int64_t>(r.device[i]) : static_cast<int64_t>(r.hostThread[i - gpu] >> 24);
    });
    t.add("tid", [&](size_t i) -> int64_t {
        return isGpu(i) ? static_cast<int64_t>(r.stream[i]) : static_cast<int64_t>(r.hostThread[i - gpu] & 0xFFFFFF);
    });
    // HTA's ts is whole us (int64) in a rounded file; dur and end are
    // float64 in every real trace, whose metadata rows have no "dur".
    if (whole)
        t.add("ts", [&](size_t i) { return (start(i) - origin_) / 1000; });
    else
        t.add("ts", [&](size_t i) { return static_cast<double>(start(i) - origin_) / 1000.0; });
    t.add("dur", [&](size_t i) { return static_cast<double>(end(i) - start(i)) / 1000.0; });
    t.add("end", [&](size_t i) { return static_cast<double>(end(i) - origin_) / 1000.0; });
    t.add("stream", [&](size_t i) -> int64_t { return isGpu(i) ? static_cast<int64_t>(r.stream[i]) : -1; });
    t.add("correlation", [&](size_t i) -> int64_t {
        const uint32_t c = isGpu(i) ? r.correlation[i] : r.hostCorrelation[i - gpu];
        return c != 0 ? static_cast<int64_t>(c) : -1;
    });
    t.add("bytes", [&](size_t i) -> int64_t { return isGpu(i) ? r.bytes[i] : -1; });
    t.add("memory_bw_gbps", [&](size_t i) { return isGpu(i) ? r.bandwidth[i] : 0.0; });
    t.add("iteration", [&](size_t i) { return isGpu(i) ? r.iteration[i] : r.hostIteration[i - gpu]; });
    t.add("index_correlation", [&](size_t i) -> int64_t {
        if (isGpu(i)) {
            const auto it = hostRowOf.find(r.correlation[i]);
            return it != hostRowOf.end() ? static_cast<int64_t>(it->second) + 1 : 0;
        }
        const size_t h = i - gpu;
        if (r.hostCorrelation[h] == 0) return -1;
        const auto it = gpuRowOf.find(r.hostCorrelation[h]);
        return it != gpuRowOf.end() ? static_cast<int64_t>(it->second) + 1 : 0;
    });
    t.add("kernel_type", [&](size_t i) -> std::string {
        return isGpu(i) ? std::string(htaKernelTypeName(r.type[i])) : std::string();
    });
    return t.finish();
}

py::dict HtaTrace::dtypes(int rank) const {
    const HtaRank& r = rankData(rank);
    py::dict out;
    out["stream"] = r.streamDtype;
    out["correlation"] = r.correlationDtype;
    return out;
}

}  // namespace osc::python

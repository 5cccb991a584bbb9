#include "analyzer/synth/host_emitter.h"

#include "analyzer/capture/schema.h"

#include <algorithm>

namespace osc::synth {
namespace {

constexpr std::string_view kRuntimeLaunch = "cudaLaunchKernel_v7000";
constexpr std::string_view kDriverLaunch = "cuLaunchKernelEx";  // how NCCL launches

}  // namespace

void emitLaunchCall(RowSink& sink, uint64_t tid, TimeNs callStart, TimeNs callEnd, uint32_t correlationId, bool nccl,
                    TimeNs off) {
    ApiCallRow call;
    call.start = callStart + off;
    call.end = callEnd + off;
    call.kind = nccl ? ApiKind::Driver : ApiKind::Runtime;
    call.globalTid = tid;
    call.correlationId = correlationId;
    call.name = nccl ? kDriverLaunch : kRuntimeLaunch;
    sink.addApiCall(call);
}

void emitLaunch(RowSink& sink, uint64_t tid, TimeNs callStart, TimeNs callEnd, KernelRow kernel, bool nccl,
                TimeNs off) {
    emitLaunchCall(sink, tid, callStart, callEnd, kernel.correlationId, nccl, off);
    kernel.start += off;
    kernel.end += off;
    sink.addKernel(kernel);
}

void emitStep(RowSink& sink, const ProcessIdentity& who, StepLaunches& step, TimeNs off) {
    if (step.launches.empty()) return;
    TimeNs gpuStart = step.launches.front().kernel.start, gpuEnd = gpuStart;
    for (const auto& l : step.launches) {
        gpuStart = std::min(gpuStart, l.kernel.start);
        gpuEnd = std::max(gpuEnd, l.kernel.end);
    }
    const auto n = static_cast<TimeNs>(step.launches.size());
    const TimeNs spacing = std::clamp<TimeNs>((gpuEnd - gpuStart) / (n + 1), 2, kMaxLaunchSpacingNs);
    const TimeNs hostStart = gpuStart - kLaunchLeadNs;
    const uint64_t tid = schema::packGlobalTid(who.pid, who.pid);

    RangeRow range;
    range.start = hostStart + off;
    range.end = hostStart + (n + 1) * spacing + off;
    range.kind = RangeKind::PushPop;
    range.text = step.name;
    range.globalTid = range.endGlobalTid = tid;
    sink.addRange(range);

    TimeNs callStart = hostStart;
    const TimeNs callLength = std::max<TimeNs>(spacing / 2, 1);
    TimeNs innerStart = 0;
    for (size_t i = 0; i < step.launches.size(); ++i) {
        SynthLaunch& l = step.launches[i];
        callStart += spacing;
        if (l.range >= 0 && (i == 0 || step.launches[i - 1].range != l.range)) innerStart = callStart;
        emitLaunch(sink, tid, callStart, callStart + callLength, l.kernel, l.nccl, off);
        for (auto row : l.rows) {
            row.enqueue = callStart + off;
            if (row.gpuStart >= 0) row.gpuStart += off;
            if (row.gpuEnd >= 0) row.gpuEnd += off;
            sink.addCollective(row);
        }
        const bool lastOfRange = i + 1 == step.launches.size() || step.launches[i + 1].range != l.range;
        if (l.range >= 0 && lastOfRange) {
            RangeRow inner;
            inner.start = innerStart + off;
            inner.end = callStart + callLength + off;
            inner.kind = RangeKind::PushPop;
            inner.text = step.ranges[static_cast<size_t>(l.range)];
            inner.globalTid = inner.endGlobalTid = tid;
            sink.addRange(inner);
        }
    }
}

}  // namespace osc::synth

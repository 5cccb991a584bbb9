#include "gui/model/flows.h"

#include <algorithm>

namespace osc::gui {

FlowIndex::FlowIndex(const Capture& capture) {
    processes_.resize(capture.processes.size());
    for (size_t p = 0; p < capture.processes.size(); ++p) {
        const Process& proc = capture.processes[p];
        if (proc.apiCalls.size() == 0) continue;  // nothing launched anything: no flows
        PerProcess& pp = processes_[p];
        std::vector<int32_t> rows(proc.apiCalls.size());
        for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
        pp.api.build(proc.apiCalls.correlation, rows);
        for (const Device& d : proc.devices) {
            std::vector<uint32_t> ids;
            std::vector<int32_t> values;
            ids.reserve(d.kernels.size() + d.copies.size() + d.memsets.size());
            values.reserve(ids.capacity());
            auto take = [&](const std::vector<uint32_t>& corr, int source) {
                for (size_t i = 0; i < corr.size(); ++i) {
                    // A graph launch gives all its kernels one id: the last one stands for them.
                    ids.push_back(corr[i]);
                    values.push_back(static_cast<int32_t>(i * 4 + static_cast<size_t>(source)));
                }
            };
            take(d.memsets.correlation, 2);
            take(d.copies.correlation, 1);
            take(d.kernels.correlation, 0);
            pp.devices.emplace_back();
            pp.devices.back().build(ids, values);
        }
    }
}

int32_t FlowIndex::apiCall(size_t process, uint32_t correlation) const {
    if (process >= processes_.size()) return -1;
    return processes_[process].api.find(correlation);
}

std::pair<EventSource, uint32_t> FlowIndex::gpuWork(size_t process, size_t device, uint32_t correlation) const {
    if (process >= processes_.size() || device >= processes_[process].devices.size()) return {EventSource::Range, 0};
    const int32_t v = processes_[process].devices[device].find(correlation);
    if (v < 0) return {EventSource::Range, 0};
    static constexpr EventSource kSources[] = {EventSource::Kernel, EventSource::Copy, EventSource::Memset};
    return {kSources[v % 4], static_cast<uint32_t>(v / 4)};
}

uint32_t correlationOf(const TimelineModel& model, EventRef ref) {
    if (!ref.valid()) return 0;
    const Lane& lane = model.lane(ref.lane);
    const EventRow& row = lane.rows[static_cast<size_t>(ref.row)];
    const uint32_t r = row.ref[ref.index];
    switch (row.source[ref.index]) {
        case EventSource::Kernel:
            return model.deviceOf(lane.group)->kernels.correlation[r];
        case EventSource::Copy:
            return model.deviceOf(lane.group)->copies.correlation[r];
        case EventSource::Memset:
            return model.deviceOf(lane.group)->memsets.correlation[r];
        case EventSource::ApiCall:
            return model.processOf(lane.group).apiCalls.correlation[r];
        default:
            return 0;
    }
}

namespace {

// The GPU work launched by API call `a` of the group's process, on any of its devices.
EventRef gpuRefOf(const TimelineModel& model, int group, uint32_t correlation) {
    const int process = model.groups()[static_cast<size_t>(group)].process;
    const Process& p = model.capture().processes[static_cast<size_t>(process)];
    for (size_t d = 0; d < p.devices.size(); ++d) {
        const auto [source, row] = model.flowIndex().gpuWork(static_cast<size_t>(process), d, correlation);
        if (source == EventSource::Range) continue;
        const int g = model.groupOfDevice(process, static_cast<int>(d));
        if (g < 0) continue;
        const Device& dev = p.devices[d];
        TimeNs start = 0;
        uint32_t stream = 0;
        if (source == EventSource::Kernel)
            start = dev.kernels.start[row], stream = dev.kernels.stream[row];
        else if (source == EventSource::Copy)
            start = dev.copies.start[row], stream = dev.copies.stream[row];
        else
            start = dev.memsets.start[row], stream = dev.memsets.stream[row];
        const EventRef r = model.findOnStream(g, stream, start, source, row);
        if (r.valid()) return r;
    }
    return {};
}

void flowsOfApiCall(const TimelineModel& model, EventRef ref, std::vector<Flow>& out) {
    const int group = model.lane(ref.lane).group;
    const uint32_t c = correlationOf(model, ref);
    if (c == 0 || c == kNoId) return;
    if (const EventRef to = gpuRefOf(model, group, c); to.valid()) out.push_back({ref, to});
}

}  // namespace

std::vector<Flow> flowsOf(const TimelineModel& model, EventRef ref, size_t limit) {
    std::vector<Flow> out;
    if (!ref.valid()) return out;
    const Lane& lane = model.lane(ref.lane);
    const EventRow& row = lane.rows[static_cast<size_t>(ref.row)];
    switch (row.source[ref.index]) {
        case EventSource::Kernel:
        case EventSource::Copy:
        case EventSource::Memset: {
            const uint32_t c = correlationOf(model, ref);
            if (c == 0 || c == kNoId) break;
            const int process = model.groups()[static_cast<size_t>(lane.group)].process;
            const int32_t a = model.flowIndex().apiCall(static_cast<size_t>(process), c);
            if (a < 0) break;
            const EventRef from = model.findApiCall(process, static_cast<uint32_t>(a));
            if (from.valid()) out.push_back({from, ref});
            break;
        }
        case EventSource::ApiCall:
            flowsOfApiCall(model, ref, out);
            break;
        case EventSource::CpuOp: {
            // Every launch nested inside the operator, on its own thread's lane.
            const TimeNs s = row.start[ref.index], e = row.end[ref.index];
            for (size_t r = static_cast<size_t>(ref.row) + 1; r < lane.rows.size() && out.size() < limit; ++r) {
                const EventRow& inner = lane.rows[r];
                for (size_t i = inner.gallopToStart(0, s); i < inner.size() && inner.start[i] < e && out.size() < limit;
                     ++i)
                    if (inner.source[i] == EventSource::ApiCall && inner.end[i] <= e)
                        flowsOfApiCall(model, {ref.lane, static_cast<int>(r), i}, out);
            }
            break;
        }
        default:
            break;
    }
    return out;
}

}  // namespace osc::gui

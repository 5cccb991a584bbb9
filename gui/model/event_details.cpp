#include "gui/model/event_details.h"

#include "analyzer/metrics/classify.h"
#include "gui/model/time_ticks.h"

#include <algorithm>
#include <cstdio>

namespace osc::gui {
namespace {

std::string bytesText(uint64_t b) {
    char buf[48];
    if (b >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
    else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
    else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
    return buf;
}

std::string bandwidthText(uint64_t bytes, TimeNs ns) {
    if (ns <= 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GB/s", static_cast<double>(bytes) / static_cast<double>(ns));
    return buf;
}

// The runtime/driver call with the same correlation id: what launched it.
std::string launchingCall(const Process& p, const StringTable& strings, uint32_t correlation) {
    const ApiCallTable& api = p.apiCalls;
    for (size_t i = 0; i < api.size(); ++i) {
        if (api.correlation[i] == correlation) {
            return std::string(strings.at(api.name[i])) + " at " + formatDuration(api.start[i]) +
                   " (tid " + std::to_string(api.globalTid[i] & 0xFFFFFF) + ")";
        }
    }
    return "-";
}

// The NCCL profiler plugin rows of a process, when the plugin ran.
const CollectiveTable* collectivesOf(const Process& p) {
    return p.collectives.size() ? &p.collectives : nullptr;
}

}  // namespace

DetailList eventDetails(const TimelineModel& model, EventRef ref) {
    DetailList d;
    if (!ref.valid()) return d;
    const Lane& lane = model.lane(ref.lane);
    const EventRow& row = lane.rows[static_cast<size_t>(ref.row)];
    const size_t i = ref.index;
    const StringTable& strings = model.capture().strings;
    const Process& proc = model.processOf(lane.group);
    const TimeNs dur = row.end[i] - row.start[i];
    const uint32_t r = row.ref[i];

    auto add = [&](std::string k, std::string v) { d.emplace_back(std::move(k), std::move(v)); };
    add("process", proc.label());
    switch (row.source[i]) {
        case EventSource::Kernel: {
            const KernelTable& K = model.deviceOf(lane.group)->kernels;
            const std::string name(strings.at(K.name[r]));
            add("kernel", name);
            const bool comm = row.category[i] == static_cast<uint8_t>(Category::Communication);
            add("category", comm ? "communication" : "compute");
            add("stream", std::to_string(K.stream[r]));
            add("start", formatDuration(row.start[i]));
            add("duration", formatDuration(dur));
            add("grid", std::to_string(K.gridX[r]) + "×" + std::to_string(K.gridY[r]) + "×" +
                            std::to_string(K.gridZ[r]));
            add("block", std::to_string(K.blockX[r]) + "×" + std::to_string(K.blockY[r]) + "×" +
                             std::to_string(K.blockZ[r]));
            add("correlation", std::to_string(K.correlation[r]));
            add("launched by", launchingCall(proc, strings, K.correlation[r]));
            if (comm) {
                const std::string coll = parseNcclKernelName(name).collective;
                if (!coll.empty()) add("collective", coll);
                if (const CollectiveTable* ct = collectivesOf(proc)) {
                    // The plugin row whose GPU start is nearest to this kernel's.
                    size_t best = ct->size();
                    TimeNs bestGap = INT64_MAX;
                    for (size_t c = 0; c < ct->size(); ++c) {
                        if (ct->gpuStart[c] < 0) continue;
                        const TimeNs gap = std::abs(ct->gpuStart[c] - row.start[i]);
                        if (gap < bestGap) best = c, bestGap = gap;
                    }
                    if (best < ct->size() && bestGap <= std::max<TimeNs>(dur, 10'000)) {
                        add("bytes", bytesText(ct->bytes[best]));
                        add("bandwidth", bandwidthText(ct->bytes[best], dur));
                        add("seq", std::to_string(ct->seqNumber[best]));
                    }
                }
                const auto others = model.matchingCollectives(ref);
                TimeNs first = row.start[i], last = row.start[i];
                for (const EventRef& o : others) {
                    const EventRow& orow = model.lane(o.lane).rows[static_cast<size_t>(o.row)];
                    first = std::min(first, orow.start[o.index]);
                    last = std::max(last, orow.start[o.index]);
                    add("on " + model.processOf(model.lane(o.lane).group).label(),
                        "starts " + formatDuration(orow.start[o.index] - row.start[i]) + " from here, lasts " +
                            formatDuration(orow.end[o.index] - orow.start[o.index]));
                }
                if (!others.empty()) add("arrival skew", formatDuration(last - first));
            }
            break;
        }
        case EventSource::Copy: {
            const CopyTable& C = model.deviceOf(lane.group)->copies;
            static const char* kKinds[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
            const auto kind = static_cast<size_t>(C.copyKind[r]);
            add("copy", std::string("memcpy ") + (kind < 11 ? kKinds[kind] : "?"));
            add("stream", std::to_string(C.stream[r]));
            add("start", formatDuration(row.start[i]));
            add("duration", formatDuration(dur));
            add("bytes", bytesText(C.bytes[r]));
            add("bandwidth", bandwidthText(C.bytes[r], dur));
            add("correlation", std::to_string(C.correlation[r]));
            add("launched by", launchingCall(proc, strings, C.correlation[r]));
            break;
        }
        case EventSource::Memset: {
            const MemsetTable& S = model.deviceOf(lane.group)->memsets;
            add("memset", std::to_string(S.value[r]));
            add("stream", std::to_string(S.stream[r]));
            add("start", formatDuration(row.start[i]));
            add("duration", formatDuration(dur));
            add("bytes", bytesText(S.bytes[r]));
            add("correlation", std::to_string(S.correlation[r]));
            break;
        }
        case EventSource::Step:
            add("step (GPU window)", model.stepName(r));
            add("start", formatDuration(row.start[i]));
            add("duration", formatDuration(dur));
            break;
        case EventSource::Range: {
            const RangeTable& R = proc.ranges;
            add("range", std::string(strings.at(R.name[r])));
            add("start", formatDuration(row.start[i]));
            add("duration", formatDuration(dur));
            add("thread", std::to_string(R.globalTid[r] & 0xFFFFFF));
            add("side", R.onGpu[r] ? "GPU annotation" : "CPU (NVTX)");
            break;
        }
    }
    return d;
}

}  // namespace osc::gui

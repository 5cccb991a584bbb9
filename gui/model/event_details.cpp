#include "gui/model/event_details.h"

#include "analyzer/capture/api_call_names.h"
#include "analyzer/crossrank/wait_transfer.h"

#include "analyzer/metrics/classify.h"
#include "analyzer/report/report_format.h"
#include "gui/model/flows.h"
#include "gui/model/host_lanes.h"
#include "gui/model/kernel_links.h"
#include "gui/model/step_patterns.h"
#include "gui/model/step_verdict.h"
#include "gui/model/time_ticks.h"

#include <algorithm>
#include <cstdio>

namespace osc::gui {
namespace {

std::string bytesText(uint64_t b) { return formatBytes(b); }

}  // namespace

std::string launchingCall(const TimelineModel& model, int group, uint32_t correlation) {
    const int process = model.groups()[static_cast<size_t>(group)].process;
    const int32_t i = model.flowIndex().apiCall(static_cast<size_t>(process), correlation);
    if (i < 0) return "-";
    const ApiCallTable& api = model.processOf(group).apiCalls;
    const auto k = static_cast<size_t>(i);
    return std::string(model.capture().strings.at(api.name[k])) + " at " + formatTimestamp(api.start[k]) + " (thread " +
           std::to_string(threadIdOf(api.globalTid[k])) + ")";
}

std::string shortKernelName(std::string_view name) {
    // Kineto and some exports keep only the demangled signature:
    // "void at::native::foo<float>(int, float*)" reads "at::native::foo<float>".
    if (name.substr(0, 5) == "void ") name.remove_prefix(5);
    static constexpr std::string_view kAnonymous = "(anonymous namespace)";
    int depth = 0;
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (name.substr(i, kAnonymous.size()) == kAnonymous) {
            i += kAnonymous.size() - 1;  // part of the name, not its parameters
            continue;
        }
        if (c == '<')
            ++depth;
        else if (c == '>')
            depth = std::max(0, depth - 1);
        else if (c == '(' && depth == 0 && i > 0)
            return std::string(name.substr(0, i));
    }
    return std::string(name);
}

namespace {

const char* copyKindShortName(CopyKind k) {
    switch (k) {
        case CopyKind::HtoD:
            return "HtoD";
        case CopyKind::DtoH:
            return "DtoH";
        case CopyKind::DtoD:
            return "DtoD";
        case CopyKind::HtoH:
            return "HtoH";
        case CopyKind::PtoP:
            return "PtoP";
        default:
            return "";
    }
}

std::string percentText(std::optional<double> v) {
    if (!v) return "–";
    return formatPercent(*v);
}

// A step's metrics, verdict and findings from the analysis, and where it is
// a pipeline stage or ran all-to-all, its bubble and the step's imbalance.
void addStep(const Analysis& a, size_t device, size_t step, DetailList& out) {
    const StepAnalysis& s = a.devices[device].steps[step];
    const OverlapMetrics& m = s.metrics;
    out.emplace_back("compute", formatDuration(m.compute_ns, 4));
    out.emplace_back("communication", formatDuration(m.comm_ns, 4));
    out.emplace_back("overlap (hidden)", formatDuration(m.overlap_ns, 4));
    out.emplace_back("exposed comm", formatDuration(m.exposed_comm_ns, 4));
    out.emplace_back("idle", formatDuration(m.idle_ns, 4) + " (" +
                                 percentText(m.window_ns > 0 ? std::optional<double>(static_cast<double>(m.idle_ns) /
                                                                                     static_cast<double>(m.window_ns))
                                                             : std::nullopt) +
                                 ")");
    out.emplace_back("overlap ratio", percentText(m.overlap_ratio));
    if (s.pipeline) {
        out.emplace_back("pipeline bubble", bubbleDetails(*s.pipeline));
        out.emplace_back("pipeline stage", stageText(*s.pipeline));
    }
    if (s.alltoall) {
        out.emplace_back("all-to-all", allToAllText(*s.alltoall));
        const int k = allToAllStepIndex(a)[device][step];
        if (k >= 0) out.emplace_back("all-to-all imbalance", imbalanceDetails(a, a.alltoall[static_cast<size_t>(k)]));
    }
    const StepVerdict v = stepVerdict(s);
    out.emplace_back("verdict", v.text);
    for (const Finding& f : s.bottleneck.findings) out.emplace_back(report::toString(f.kind), f.message);
}

// Where another event starts relative to this one, in words.
std::string startsRelative(TimeNs delta) {
    if (delta == 0) return "starts at the same time";
    return "starts " + formatDuration(delta < 0 ? -delta : delta) + (delta < 0 ? " earlier" : " later");
}

std::string bandwidthText(uint64_t bytes, TimeNs ns) {
    if (ns <= 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GB/s", static_cast<double>(bytes) / static_cast<double>(ns));
    return buf;
}

// The NCCL profiler plugin rows of a process, when the plugin ran.
const CollectiveTable* collectivesOf(const Process& p) { return p.collectives.size() ? &p.collectives : nullptr; }

std::string signedPercent(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", v * 100.0);
    return buf;
}

// A compute kernel against its signature (name, grid, block) alone.
void addInterference(const DeviceAnalysis& d, const DeviceGroup& g, const KernelTable& K, uint32_t r,
                     const std::string& name, TimeNs dur, DetailList& out) {
    const TimeNs under = g.coverage.comm.covered(K.start[r], K.end[r]);
    out.emplace_back("under communication", formatDuration(under) + " of " + formatDuration(dur));
    const auto col = [&](const std::vector<uint32_t>& c) { return r < c.size() ? c[r] : 0u; };
    for (const auto& s : d.signatures) {
        if (s.name != name || s.grid[0] != col(K.gridX) || s.grid[1] != col(K.gridY) || s.grid[2] != col(K.gridZ) ||
            s.block[0] != col(K.blockX) || s.block[1] != col(K.blockY) || s.block[2] != col(K.blockZ))
            continue;
        if (!s.baseline_ns) {
            out.emplace_back("alone (baseline)",
                             "not measured: ran alone " + std::to_string(s.isolated) + " times, needs 3");
            return;
        }
        out.emplace_back("alone (baseline)",
                         formatDuration(*s.baseline_ns) + ", median of " + std::to_string(s.isolated) + " runs");
        if (*s.baseline_ns > 0)
            out.emplace_back("this run vs alone",
                             signedPercent(static_cast<double>(dur) / static_cast<double>(*s.baseline_ns) - 1.0));
        return;
    }
}

// docs/design.md 4d: the operation's bus bandwidth, how it was timed, and
// against which link.
void addBusBandwidth(const DeviceAnalysis& d, const CollectiveInstance& op, DetailList& out) {
    if (!op.algbw_gbps) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.1f GB/s over the %s", *op.algbw_gbps,
                  op.busbw_basis == BusBwBasis::Transfer ? "transfer after the last rank arrived"
                                                         : "whole kernel (matched on no other rank)");
    out.emplace_back("algorithm bandwidth", buf);
    if (!op.busbw_gbps) {
        out.emplace_back("bus bandwidth", "unknown: the communicator's size is not recorded");
        return;
    }
    std::string bus;
    std::snprintf(buf, sizeof buf, "%.1f GB/s", *op.busbw_gbps);
    bus = buf;
    if (op.busbw_fraction && d.busbw && d.busbw->peak_busbw_gbps) {
        std::snprintf(buf, sizeof buf, " (%.0f%% of %s, %.0f GB/s)", *op.busbw_fraction * 100.0, d.busbw->link.c_str(),
                      *d.busbw->peak_busbw_gbps);
        bus += buf;
    } else if (d.busbw && d.busbw->peak_busbw_gbps) {
        bus += " (its ranks span hosts: the link's peak does not apply)";
    }
    out.emplace_back("bus bandwidth", bus);
}

const CollectiveInstance& opAt(const Analysis& a, std::pair<int, int> where) {
    return a.devices[static_cast<size_t>(where.first)].collectives[static_cast<size_t>(where.second)];
}

// A communication kernel's waiting and transfer (docs/design.md 4c, docs/metrics.md
// 7d): a collective (or all-to-all exchange) waits for the latest start of
// its group; a send or receive for its partners that started while it ran.
void addWaitTransfer(const Analysis& a, const KernelLinks& links, DetailList& out) {
    const CollectiveInstance& op = opAt(a, {links.device, links.op});
    TimeNs last = op.start_ns;
    int lastDevice = links.device;
    if (links.matched >= 0) {
        for (const auto& inst : a.matched[static_cast<size_t>(links.matched)].instances)
            if (opAt(a, inst).start_ns > last) last = opAt(a, inst).start_ns, lastDevice = inst.first;
    } else if (links.pointToPoint()) {
        for (const PeerTransfer& t : links.transfers) {
            const TimeNs s = opAt(a, {t.partnerDevice, t.partnerOp}).start_ns;
            if (s <= op.end_ns && s > last) last = s, lastDevice = t.partnerDevice;
        }
    } else {
        out.emplace_back("transfer", formatDuration(op.duration_ns) + " (matched on no other rank)");
        return;
    }
    const bool p2p = links.matched < 0;
    const crossrank::OperationSplit split = crossrank::splitAtLastArrival(op.start_ns, op.end_ns, last);
    out.emplace_back(p2p ? "waiting for partner" : "waiting for last rank", formatDuration(split.waiting.length()));
    out.emplace_back("transfer", formatDuration(split.transfer.length()));
    out.emplace_back("last to arrive", lastDevice == links.device && last == op.start_ns && p2p
                                           ? "this kernel"
                                           : deviceLabel(a.devices[static_cast<size_t>(lastDevice)]));
}

// The sends and receives of a SendRecv kernel: per partner kernel, which way
// and how many bytes, and when the partner ran relative to this kernel.
void addTransfers(const Analysis& a, const KernelLinks& links, TimeNs start, DetailList& out) {
    std::vector<std::pair<int, int>> partners;
    for (const PeerTransfer& t : links.transfers)
        if (std::find(partners.begin(), partners.end(), std::make_pair(t.partnerDevice, t.partnerOp)) == partners.end())
            partners.emplace_back(t.partnerDevice, t.partnerOp);
    std::sort(partners.begin(), partners.end());  // by device: rank order, as the timeline
    for (const auto& p : partners) {
        uint64_t sent = 0, received = 0;
        int sends = 0, receives = 0;
        for (const PeerTransfer& t : links.transfers) {
            if (std::make_pair(t.partnerDevice, t.partnerOp) != p) continue;
            (t.send ? sent : received) += t.bytes;
            ++(t.send ? sends : receives);
        }
        const CollectiveInstance& other = opAt(a, p);
        std::string key = sends && receives ? "exchange with" : sends ? "send to" : "receive from";
        // Single direction: the key says which way. Both: this kernel's part each way.
        std::string value = deviceLabel(a.devices[static_cast<size_t>(p.first)]) + ", ";
        if (sends && receives)
            value += "sends " + bytesText(sent) + ", receives " + bytesText(received);
        else
            value += bytesText(sends ? sent : received);
        value +=
            "; its kernel " + startsRelative(other.start_ns - start) + ", lasts " + formatDuration(other.duration_ns);
        out.emplace_back(std::move(key), std::move(value));
    }
}

// Per other rank, when its instance started and how long it ran. With many
// ranks only the earliest and the latest few are listed (a slow rank is
// among the latest) and a line says what the others spanned: a line per rank
// of a 1,024-rank job filled Details with a thousand rows (issue 40).
void addPartnerArrivals(const TimelineModel& model, const KernelLinks& links, TimeNs start, DetailList& out) {
    if (links.partners.empty()) return;
    struct Other {
        TimeNs start, end;
        int group;
    };
    std::vector<Other> others;
    others.reserve(links.partners.size());
    TimeNs first = start, last = start;
    for (const EventRef& o : links.partners) {
        const EventRow& orow = model.lane(o.lane).rows[static_cast<size_t>(o.row)];
        others.push_back({orow.start[o.index], orow.end[o.index], model.lane(o.lane).group});
        first = std::min(first, orow.start[o.index]);
        last = std::max(last, orow.start[o.index]);
    }
    const auto line = [&](const Other& o) {
        out.emplace_back("on " + model.processOf(o.group).label(),
                         startsRelative(o.start - start) + ", lasts " + formatDuration(o.end - o.start));
    };
    if (!links.pointToPoint()) {  // a send or receive said it per partner already
        if (others.size() <= kListedPartners) {
            for (const Other& o : others) line(o);
        } else {
            std::stable_sort(others.begin(), others.end(),
                             [](const Other& a, const Other& b) { return a.start < b.start; });
            const size_t early = 2, late = kListedPartners - early, between = others.size() - early - late;
            for (size_t k = 0; k < early; ++k) line(others[k]);
            out.emplace_back("on " + std::to_string(between) + " other ranks",
                             "start from " + startsRelative(others[early].start - start) + " to " +
                                 startsRelative(others[early + between - 1].start - start));
            for (size_t k = others.size() - late; k < others.size(); ++k) line(others[k]);
        }
    }
    out.emplace_back("arrival skew", formatDuration(last - first));
}

}  // namespace

std::string eventLabel(const TimelineModel& model, const Lane& lane, const EventRow& row, size_t i) {
    const StringTable& strings = model.capture().strings;
    const uint32_t r = row.ref[i];
    switch (row.source[i]) {
        case EventSource::Kernel: {
            const Device* dev = model.deviceOf(lane.group);
            const auto shortName = strings.at(dev->kernels.shortName[r]);
            return shortKernelName(shortName.empty() ? strings.at(dev->kernels.name[r]) : shortName);
        }
        case EventSource::Copy:
            return std::string("memcpy ") + copyKindShortName(model.deviceOf(lane.group)->copies.copyKind[r]);
        case EventSource::Memset:
            return "memset";
        case EventSource::Range:
            return std::string(strings.at(model.processOf(lane.group).ranges.name[r]));
        case EventSource::Step:
            return model.stepName(r);
        case EventSource::ApiCall:
            return std::string(strings.at(model.processOf(lane.group).apiCalls.name[r]));
        case EventSource::CpuOp:
            return std::string(strings.at(model.processOf(lane.group).cpuOps.name[r]));
    }
    return {};
}

DetailList eventDetails(const TimelineModel& model, EventRef ref, const Analysis* analysis) {
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
            add("start", formatTimestamp(row.start[i]));
            add("duration", formatDuration(dur));
            add("grid",
                std::to_string(K.gridX[r]) + "×" + std::to_string(K.gridY[r]) + "×" + std::to_string(K.gridZ[r]));
            add("block",
                std::to_string(K.blockX[r]) + "×" + std::to_string(K.blockY[r]) + "×" + std::to_string(K.blockZ[r]));
            add("correlation", std::to_string(K.correlation[r]));
            add("launched by", launchingCall(model, lane.group, K.correlation[r]));
            if (comm) {
                const std::string coll = parseNcclKernelName(name).collective;
                const KernelLinks links = linkedKernels(model, analysis, ref);
                const CollectiveInstance* op = analysis && links.op >= 0
                                                   ? &analysis->devices[static_cast<size_t>(links.device)]
                                                          .collectives[static_cast<size_t>(links.op)]
                                                   : nullptr;
                if (!coll.empty()) add("collective", coll + (op && op->allToAll ? " (all-to-all exchange)" : ""));
                if (op) {
                    // The analyzer's rows for it (on the kernels' clock, summed
                    // over the parts of a grouped send/receive).
                    if (op->bytes) add("bytes", bytesText(*op->bytes));
                    if (op->bytes) add("bandwidth", bandwidthText(*op->bytes, dur));
                    addBusBandwidth(analysis->devices[static_cast<size_t>(links.device)], *op, d);
                    if (op->seqNumber) add("seq", std::to_string(*op->seqNumber));
                } else if (const CollectiveTable* ct = collectivesOf(proc)) {
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
                if (links.pointToPoint()) {
                    addTransfers(*analysis, links, row.start[i], d);
                } else if (coll == "SendRecv") {
                    add("peer", "unknown: no NCCL profiler plugin row or trace argument names this kernel's peer");
                }
                addPartnerArrivals(model, links, row.start[i], d);
                if (op) addWaitTransfer(*analysis, links, d);
            }
            const DeviceGroup& g = model.groups()[static_cast<size_t>(lane.group)];
            if (!comm && analysis && g.analysisDevice >= 0 &&
                static_cast<size_t>(g.analysisDevice) < analysis->devices.size())
                addInterference(analysis->devices[static_cast<size_t>(g.analysisDevice)], g, K, r, name, dur, d);
            break;
        }
        case EventSource::Copy: {
            const CopyTable& C = model.deviceOf(lane.group)->copies;
            static const char* kKinds[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
            const auto kind = static_cast<size_t>(C.copyKind[r]);
            add("copy", std::string("memcpy ") + (kind < 11 ? kKinds[kind] : "?"));
            add("stream", std::to_string(C.stream[r]));
            add("start", formatTimestamp(row.start[i]));
            add("duration", formatDuration(dur));
            add("bytes", bytesText(C.bytes[r]));
            add("bandwidth", bandwidthText(C.bytes[r], dur));
            add("correlation", std::to_string(C.correlation[r]));
            add("launched by", launchingCall(model, lane.group, C.correlation[r]));
            break;
        }
        case EventSource::Memset: {
            const MemsetTable& S = model.deviceOf(lane.group)->memsets;
            add("memset", std::to_string(S.value[r]));
            add("stream", std::to_string(S.stream[r]));
            add("start", formatTimestamp(row.start[i]));
            add("duration", formatDuration(dur));
            add("bytes", bytesText(S.bytes[r]));
            add("correlation", std::to_string(S.correlation[r]));
            break;
        }
        case EventSource::Step: {
            add("step (GPU window)", model.stepName(r));
            add("start", formatTimestamp(row.start[i]));
            add("duration", formatDuration(dur, 4));
            const auto [dev, step] = model.stepOrigin(r);
            if (analysis && dev >= 0 && static_cast<size_t>(dev) < analysis->devices.size() &&
                static_cast<size_t>(step) < analysis->devices[static_cast<size_t>(dev)].steps.size())
                addStep(*analysis, static_cast<size_t>(dev), static_cast<size_t>(step), d);
            break;
        }
        case EventSource::ApiCall: {
            const ApiCallTable& A = proc.apiCalls;
            const std::string_view name = strings.at(A.name[r]);
            const char* family = apiFamily(name) == ApiFamily::Hip ? "HIP " : "CUDA ";
            add(std::string(family) + (A.kind[r] == ApiKind::Driver ? "driver call" : "runtime call"),
                std::string(name));
            add("thread", std::to_string(threadIdOf(A.globalTid[r])));
            add("start", formatTimestamp(row.start[i]));
            add("duration", formatDuration(dur, 4));
            add("correlation", std::to_string(A.correlation[r]));
            const auto flows = flowsOf(model, ref);
            if (!flows.empty()) {
                const EventRef to = flows.front().to;
                const Lane& gl = model.lane(to.lane);
                const EventRow& gr = gl.rows[static_cast<size_t>(to.row)];
                add("launched", eventLabel(model, gl, gr, to.index) + " on " + gl.label + ", " +
                                    formatDuration(gr.start[to.index] - row.start[i], 4) + " later");
            }
            break;
        }
        case EventSource::CpuOp: {
            const CpuOpTable& O = proc.cpuOps;
            add("operator", std::string(strings.at(O.name[r])));
            add("thread", std::to_string(threadIdOf(O.globalTid[r])));
            add("start", formatTimestamp(row.start[i]));
            add("duration", formatDuration(dur, 4));
            const auto flows = flowsOf(model, ref);
            add("GPU work launched", std::to_string(flows.size()) + (flows.size() >= 64 ? "+" : ""));
            break;
        }
        case EventSource::Range: {
            const RangeTable& R = proc.ranges;
            add("range", std::string(strings.at(R.name[r])));
            add("start", formatTimestamp(row.start[i]));
            add("duration", formatDuration(dur));
            add("thread", std::to_string(R.globalTid[r] & 0xFFFFFF));
            add("side", R.onGpu[r] ? "GPU annotation" : "CPU (NVTX)");
            break;
        }
    }
    return d;
}

}  // namespace osc::gui

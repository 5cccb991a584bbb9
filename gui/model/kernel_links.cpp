#include "gui/model/kernel_links.h"

#include "gui/model/op_links.h"

#include <algorithm>
#include <map>

namespace osc::gui {

std::string deviceLabel(const DeviceAnalysis& d) {
    return (d.rank >= 0 ? "rank " + std::to_string(d.rank) : d.host + ":" + std::to_string(d.pid)) + " · GPU " +
           std::to_string(d.device);
}

std::vector<int> groupsOfDevices(const TimelineModel& model, const Analysis& analysis) {
    std::vector<int> out(analysis.devices.size(), -1);
    for (size_t g = 0; g < model.groups().size(); ++g) {
        const int d = model.groups()[g].analysisDevice;
        if (d >= 0 && static_cast<size_t>(d) < out.size()) out[static_cast<size_t>(d)] = static_cast<int>(g);
    }
    // Checked, as the model may have been annotated with another analysis;
    // a device it does not name is searched for.
    for (size_t d = 0; d < out.size(); ++d) {
        const DeviceAnalysis& dev = analysis.devices[d];
        const int g = out[d];
        const Device* shown = g >= 0 ? model.deviceOf(g) : nullptr;
        if (!shown || model.groups()[static_cast<size_t>(g)].process != dev.processIndex || shown->id != dev.device)
            out[d] = model.groupOf(dev);
    }
    return out;
}

KernelLinks linkedKernels(const TimelineModel& model, const Analysis* a, EventRef ref) {
    KernelLinks out;
    if (!ref.valid()) return out;
    const Lane& lane = model.lane(ref.lane);
    const EventRow& row = lane.rows[static_cast<size_t>(ref.row)];
    if (row.source[ref.index] != EventSource::Kernel ||
        row.category[ref.index] != static_cast<uint8_t>(Category::Communication))
        return out;
    const DeviceGroup& g = model.groups()[static_cast<size_t>(lane.group)];
    if (!a || g.analysisDevice < 0 || static_cast<size_t>(g.analysisDevice) >= a->devices.size()) {
        out.partners = model.matchingCollectives(ref);
        return out;
    }
    const int op =
        opOfKernel(a->devices[static_cast<size_t>(g.analysisDevice)], row.ref[ref.index], row.start[ref.index]);
    if (op < 0) return out;
    out.device = g.analysisDevice;
    out.op = op;
    out.matched = g.opLinks.matchOf(static_cast<size_t>(op));

    const std::vector<int> groupOfDevice = groupsOfDevices(model, *a);
    auto drawnAt = [&](std::pair<int, int> where) -> EventRef {
        const int group = groupOfDevice[static_cast<size_t>(where.first)];
        if (group < 0) return {};
        const CollectiveInstance& c =
            a->devices[static_cast<size_t>(where.first)].collectives[static_cast<size_t>(where.second)];
        if (c.kernelIndex == static_cast<size_t>(-1))
            return model.findOnStream(group, c.stream, c.start_ns, EventSource::Copy);
        return model.findKernel(group, static_cast<uint32_t>(c.kernelIndex));
    };
    const std::pair<int, int> self{out.device, op};
    if (out.matched >= 0)
        for (const auto& inst : a->matched[static_cast<size_t>(out.matched)].instances)
            if (inst != self)
                if (const EventRef r = drawnAt(inst); r.valid()) out.partners.push_back(r);

    // Per partner kernel, which ways data went (bit 1: this kernel sent, bit 2: it received).
    std::map<std::pair<int, int>, int> ways;
    for (uint32_t t : g.opLinks.transfersOf(static_cast<size_t>(op))) {
        const P2pTransfer& tr = a->p2p[t];
        const bool send = tr.sender == self;
        const auto other = send ? tr.receiver : tr.sender;
        out.transfers.push_back({send, other.first, other.second, tr.bytes, drawnAt(other)});
        ways[other] |= send ? 1 : 2;
    }
    const TimeNs start = row.start[ref.index];
    for (const auto& [other, way] : ways) {
        const EventRef r = drawnAt(other);
        if (!r.valid()) continue;
        if (out.matched < 0) out.partners.push_back(r);
        if (out.arrows.size() >= kMaxPeerArrows) continue;
        const TimeNs otherStart =
            a->devices[static_cast<size_t>(other.first)].collectives[static_cast<size_t>(other.second)].start_ns;
        const bool sends = way & 1;
        out.arrows.push_back({sends ? ref : r, sends ? r : ref, std::max(start, otherStart), way == 3});
    }
    return out;
}

}  // namespace osc::gui

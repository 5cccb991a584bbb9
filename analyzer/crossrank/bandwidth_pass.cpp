#include "analyzer/crossrank/bandwidth_pass.h"

#include "analyzer/metrics/bottleneck.h"
#include "analyzer/metrics/bus_bandwidth.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

namespace osc::crossrank {
namespace {

std::string percent(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", v * 100.0);
    return buf;
}

std::string gbps(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f GB/s", v);
    return buf;
}

// Exposed time of the operations with a known fraction of the peak, on a
// busy link and on an idle one, and their fractions.
struct Split {
    TimeNs busy = 0, idle = 0;
    std::vector<double> busyFractions, idleFractions;

    void add(TimeNs exposed, double fraction) {
        if (exposed <= 0) return;
        if (fraction >= kBandwidthLimitFraction) {
            busy += exposed;
            busyFractions.push_back(fraction);
        } else {
            idle += exposed;
            idleFractions.push_back(fraction);
        }
    }

    // `where`: " (LINK, PEAK GB/s)".
    std::vector<Finding> findings(const std::string& where) {
        std::vector<Finding> out;
        if (busy > 0)
            addFinding(out,
                       {FindingKind::BandwidthLimit,
                        findingDuration(busy) + " of exposed communication ran at a median " +
                            percent(*lowerMedianOrNull(busyFractions)) + " of the link's peak bus bandwidth" + where +
                            ": the link is the limit, not the schedule; hide it under more compute or move "
                            "fewer bytes.",
                        busy});
        if (idle > 0)
            addFinding(out,
                       {FindingKind::ScheduleLimit,
                        findingDuration(idle) + " of exposed communication ran at a median " +
                            percent(*lowerMedianOrNull(idleFractions)) + " of the link's peak bus bandwidth" + where +
                            ": the link sat mostly idle, so the schedule exposed it (late launches, waiting for "
                            "other ranks, small messages), not bandwidth.",
                        idle});
        return out;
    }
};

struct Values {
    std::vector<double> algbw, busbw, fraction;
};

}  // namespace

DeviceBandwidth deviceBandwidth(const DeviceSource& source, const std::vector<OpRecord>& ops,
                                const std::vector<BandwidthRecord>& records, const std::vector<OpArrival>& arrival,
                                const std::string& gpu, std::optional<double> peakOption, size_t steps,
                                const std::vector<std::string>& sharesGpuWith) {
    DeviceBandwidth out;
    BusBandwidth& sum = out.summary;
    const std::optional<LinkPeak> model = sharesGpuWith.empty() ? linkOfGpu(gpu) : std::nullopt;
    if (peakOption) {
        sum.peak_busbw_gbps = *peakOption;
        sum.link = "--peak-busbw-gbps";
    } else if (model) {
        sum.peak_busbw_gbps = model->gbps;
        sum.link = model->link;
    }
    // Most operations of a capture without sizes have none: no room for them.
    const bool any = std::any_of(records.begin(), records.end(), [](const BandwidthRecord& r) { return r.hasBytes; });
    if (any) out.ops.resize(ops.size());
    static const std::string kUnknown;
    const auto nameOf = [&](const OpRecord& op) -> const std::string& {
        return op.key == kNoKey ? kUnknown : source.collectiveNames()[source.keys()[op.key].name];
    };
    Values all;
    // Keyed by views of the source's names: a string key was a heap
    // allocation per operation, a tenth of a small device's merge.
    static const std::string kAllToAll = "AllToAll";
    std::map<std::pair<std::string_view, uint64_t>, Values> classes;
    Split device;
    std::vector<Split> perStep(steps);
    for (size_t i = 0; i < ops.size() && i < records.size() && i < arrival.size(); ++i) {
        const BandwidthRecord& r = records[i];
        if (!r.hasBytes) continue;
        const OpArrival& a = arrival[i];
        const TimeNs t = a.basis == BusBwBasis::Transfer ? ops[i].end_ns - std::max(ops[i].start_ns, a.last)
                                                         : ops[i].end_ns - ops[i].start_ns;
        if (t <= 0) continue;
        OpBandwidth& b = out.ops[i];
        b.basis = a.basis;
        b.algbw_gbps = static_cast<double>(r.busBytes) / static_cast<double>(t);
        if (r.hasFactor) b.busbw_gbps = *b.algbw_gbps * r.factor;
        // The GPU's link does not limit a collective that crosses hosts.
        if (b.busbw_gbps && sum.peak_busbw_gbps && *sum.peak_busbw_gbps > 0 && (peakOption || !a.multiHost) &&
            *b.busbw_gbps <= kMaxBusBwFraction * *sum.peak_busbw_gbps)
            b.busbw_fraction = *b.busbw_gbps / *sum.peak_busbw_gbps;
        ++sum.measured;
        Values& v = classes[{r.allToAll ? std::string_view(kAllToAll) : std::string_view(nameOf(ops[i])),
                             sizeClassOf(r.busBytes)}];
        for (Values* x : {&all, &v}) {
            x->algbw.push_back(*b.algbw_gbps);
            if (b.busbw_gbps) x->busbw.push_back(*b.busbw_gbps);
            if (b.busbw_fraction) x->fraction.push_back(*b.busbw_fraction);
        }
        if (b.busbw_fraction) {
            device.add(r.exposed_ns, *b.busbw_fraction);
            if (r.step >= 0 && static_cast<size_t>(r.step) < steps)
                perStep[static_cast<size_t>(r.step)].add(r.exposed_ns, *b.busbw_fraction);
        }
    }
    sum.median_algbw_gbps = lowerMedianOrNull(all.algbw);
    sum.median_busbw_gbps = lowerMedianOrNull(all.busbw);
    sum.median_busbw_fraction = lowerMedianOrNull(all.fraction);
    sum.bandwidth_limit_exposed_ns = device.busy;
    sum.schedule_limit_exposed_ns = device.idle;
    for (auto& [key, v] : classes) {
        BusBwClass c;
        c.collective = std::string(key.first);
        c.size_class = key.second;
        c.count = static_cast<int>(v.algbw.size());
        c.median_algbw_gbps = lowerMedianOrNull(v.algbw);
        c.median_busbw_gbps = lowerMedianOrNull(v.busbw);
        c.median_busbw_fraction = lowerMedianOrNull(v.fraction);
        sum.classes.push_back(std::move(c));
    }
    if (!sharesGpuWith.empty()) {
        // It qualifies every exposed operation's time: ranked with the device's exposed communication.
        TimeNs exposed = 0;
        for (const BandwidthRecord& r : records) exposed += r.exposed_ns;
        addFinding(out.findings,
                   {FindingKind::SharedGpu,
                    "Shares its GPU with " + listInWords(sharesGpuWith) +
                        " (the same GPU UUID): the ranks take turns on it (or split it under MPS), so its "
                        "communication waits for the other ranks' work and crosses no link; its speed says "
                        "nothing about the interconnect, and no link's peak is compared" +
                        (peakOption ? " but --peak-busbw-gbps's." : "."),
                    exposed});
    }
    if (sum.peak_busbw_gbps) {
        const std::string where = " (" + sum.link + ", " + gbps(*sum.peak_busbw_gbps) + ")";
        auto link = device.findings(where);
        out.findings.insert(out.findings.end(), link.begin(), link.end());
        out.stepFindings.resize(steps);
        for (size_t s = 0; s < steps; ++s) out.stepFindings[s] = perStep[s].findings(where);
    }
    return out;
}

}  // namespace osc::crossrank

#include "analyzer/report/report_costs.h"

#include "analyzer/report/report_format.h"

#include <algorithm>
#include <cstdio>

namespace osc::report {
namespace {

std::string percent(double share) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", share * 100.0);
    return buf;
}

std::string dims(const std::array<uint32_t, 3>& v) {
    return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

std::string optDuration(const std::optional<TimeNs>& v) { return v ? formatDuration(*v) : "-"; }

// Durations that may be negative ("-1.20 ms").
std::string signedDuration(TimeNs v) { return v < 0 ? "-" + formatDuration(-v) : formatDuration(v); }

std::string gbps(double v, const char* format = "%.1f GB/s") {
    char buf[32];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// docs/design.md 4d in words: how fast the device's collectives moved data
// against its link, and whether its exposed communication ran on a busy link.
std::string bandwidthSentence(const BusBandwidth& b) {
    if (b.measured == 0 || !b.median_algbw_gbps) return {};
    std::string s;
    if (!b.median_busbw_gbps) {
        s = "collectives moved data at a median " + gbps(*b.median_algbw_gbps) +
            " algorithm bandwidth (communicator sizes unknown: no bus bandwidth)";
    } else {
        s = "collectives moved data at a median " + gbps(*b.median_busbw_gbps) + " bus bandwidth";
        if (b.median_busbw_fraction)
            s += ", " + percent(*b.median_busbw_fraction) + " of the link's peak (" + b.link + ", " +
                 gbps(*b.peak_busbw_gbps, "%.0f GB/s") + ")";
        else if (!b.peak_busbw_gbps)
            s += " (link unknown: --peak-busbw-gbps sets its peak)";
        else
            s += " (they cross hosts: --peak-busbw-gbps sets the network's peak)";
    }
    std::vector<std::string> exposed;
    if (b.bandwidth_limit_exposed_ns > 0)
        exposed.push_back(formatDuration(b.bandwidth_limit_exposed_ns) +
                          " ran on a busy link (80% of its peak or more, the link's limit)");
    if (b.schedule_limit_exposed_ns > 0)
        exposed.push_back(formatDuration(b.schedule_limit_exposed_ns) + " on a mostly idle one (the schedule's)");
    for (size_t i = 0; i < exposed.size(); ++i) s += (i == 0 ? "; of exposed communication " : ", ") + exposed[i];
    return s;
}

// The largest known part of a late arrival, as a clause.
std::string mainCause(const LateArrival& w) {
    const std::pair<std::optional<TimeNs>, std::string> parts[] = {
        {w.host_idle_ns,
         "host-bound (GPU idle)" +
             (w.host.empty() || w.host[0].name.empty() ? std::string() : " in `" + w.host[0].name + "`")},
        {w.compute_ns, "longer compute kernels"},
        {w.late_start_ns, "a late step start"},
        {w.other_ns, "communication and copies before it"}};
    const auto* best = &parts[0];
    for (const auto& p : parts)
        if (p.first && (!best->first || *p.first > *best->first)) best = &p;
    if (!best->first || *best->first <= 0) return {};
    return formatDuration(*best->first) + " of it " + best->second;
}

}  // namespace

std::vector<std::string> costSentences(const DeviceAnalysis& d) {
    std::vector<std::string> out;
    const auto& i = d.interference;
    if (i.interfered_compute_ns > 0) {
        const TimeNs hid = d.totals.overlap_ns;
        std::string s;
        if (i.interference_ns >= 0)
            s = "overlap hid " + formatDuration(hid) + " but slowed compute by " + formatDuration(i.interference_ns) +
                ": net " + signedDuration(i.net_overlap_gain_ns);
        else
            s = "overlap hid " + formatDuration(hid) + " and compute under it ran " +
                formatDuration(-i.interference_ns) + " faster than alone: net " + signedDuration(i.net_overlap_gain_ns);
        if (i.compute_slowdown)
            s += " (compute under communication " +
                 (*i.compute_slowdown >= 0 ? percent(*i.compute_slowdown) + " slower"
                                           : percent(-*i.compute_slowdown) + " faster") +
                 ")";
        if (i.interference_coverage && *i.interference_coverage < 0.5)
            s += "; only " + percent(*i.interference_coverage) + " of the overlapped compute has an isolated baseline";
        out.push_back(s);
        if (i.net_overlap_gain_ns < 0)
            out.push_back(
                "overlap costs more compute than it hides: running communication after "
                "compute would be faster here");
    }
    if (d.busbw)
        if (auto b = bandwidthSentence(*d.busbw); !b.empty()) out.push_back(std::move(b));
    if (d.wait && !d.wait->known() && d.totals.exposed_comm_ns > 0) {
        out.push_back(waitUnknownSentence(*d.wait) +
                      " (no NCCL plugin rows or PyTorch arguments name it), so how much "
                      "of exposed communication is waiting for other ranks is not known");
    } else if (d.wait && d.totals.exposed_comm_ns > 0) {
        const double share =
            static_cast<double>(d.wait->exposed_wait_ns) / static_cast<double>(d.totals.exposed_comm_ns);
        out.push_back(percent(share) + " of exposed communication (" + formatDuration(d.wait->exposed_wait_ns) +
                      " of " + formatDuration(d.totals.exposed_comm_ns) + ") is waiting for other ranks, not transfer");
    }
    return out;
}

std::string waitUnknownSentence(const WaitTransferMetrics& w) {
    if (w.kernels_without_peer < 0) return "waiting unknown";
    return "waiting unknown: " + std::to_string(w.kernels_without_peer) +
           (w.kernels_without_peer == 1 ? " SendRecv kernel has no peer" : " SendRecv kernels have no peer");
}

std::string spreadStepTimeSentence(const RankSpread& s) {
    if (!s.step_time_min_ns || !s.step_time_median_ns || !s.step_time_max_ns)
        return "step time min/median/max: unknown, no steps found on every device";
    return "step time min/median/max: " + formatDuration(*s.step_time_min_ns) + " / " +
           formatDuration(*s.step_time_median_ns) + " / " + formatDuration(*s.step_time_max_ns);
}

std::string stragglerSentence(const Analysis& a) { return stragglerSentence(a.devices, a.matched.size()); }

std::string stragglerSentence(const std::vector<DeviceAnalysis>& devices, size_t matchedCount) {
    if (devices.size() < 2 || matchedCount == 0) return {};
    const DeviceAnalysis* worst = nullptr;
    for (const auto& d : devices)
        if (d.last_arrivals && *d.last_arrivals > 0 &&
            (!worst || *d.last_arrivals > *worst->last_arrivals ||
             (*d.last_arrivals == *worst->last_arrivals &&
              d.delay_caused_ns.value_or(0) > worst->delay_caused_ns.value_or(0))))
            worst = &d;
    if (!worst) return {};
    std::string s = deviceLabel(*worst) + " arrived last at " + std::to_string(*worst->last_arrivals) + " of " +
                    std::to_string(matchedCount) + " collectives (" +
                    formatDuration(worst->delay_caused_ns.value_or(0)) + " of others' waiting)";
    if (worst->straggler) {
        const LateArrival& w = worst->straggler->worst;
        s += "; at worst " + formatDuration(w.late_ns) + " after the median rank, at " + w.collective + " #" +
             std::to_string(w.number) + (w.step.empty() ? "" : " of " + w.step);
        if (const auto cause = mainCause(w); !cause.empty()) s += ": " + cause;
    }
    return s;
}

TextTable interferenceTable(const DeviceAnalysis& d, size_t top) {
    TextTable t(
        {"kernel", "grid", "block", "alone", "overlapped", "baseline", "median overlapped", "slowdown", "per kernel"});
    const size_t n = top == 0 ? d.signatures.size() : std::min(top, d.signatures.size());
    for (size_t k = 0; k < n; ++k) {
        const auto& s = d.signatures[k];
        std::string per = "-";
        if (s.baseline_ns && *s.baseline_ns > 0 && s.median_overlapped_ns) {
            char buf[32];
            std::snprintf(
                buf, sizeof buf, "%+.1f%%",
                (static_cast<double>(*s.median_overlapped_ns) / static_cast<double>(*s.baseline_ns) - 1.0) * 100.0);
            per = buf;
        }
        const auto paren = s.name.find('(');
        t.addRow({paren == std::string::npos ? s.name : s.name.substr(0, paren), dims(s.grid), dims(s.block),
                  std::to_string(s.isolated), std::to_string(s.overlapped), optDuration(s.baseline_ns),
                  optDuration(s.median_overlapped_ns), s.slowdown_ns ? signedDuration(*s.slowdown_ns) : "-", per});
    }
    return t;
}

}  // namespace osc::report

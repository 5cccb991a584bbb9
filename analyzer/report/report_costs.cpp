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
    return deviceLabel(*worst) + " arrived last at " + std::to_string(*worst->last_arrivals) + " of " +
           std::to_string(matchedCount) + " collectives (" + formatDuration(worst->delay_caused_ns.value_or(0)) +
           " of others' waiting)";
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

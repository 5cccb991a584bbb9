#include "analyzer/report/diff.h"

#include "analyzer/report/device_pairs.h"
#include "analyzer/report/report_patterns.h"

#include <algorithm>
#include <cmath>

namespace osc::report {
namespace {

std::optional<double> ns(TimeNs v) { return static_cast<double>(v); }

MetricDelta delta(std::string name, std::optional<double> base, std::optional<double> cand) {
    MetricDelta d;
    d.name = std::move(name);
    d.base = base;
    d.candidate = cand;
    if (base && cand) {
        d.change = *cand - *base;
        if (*base != 0) d.relativePct = *d.change / std::fabs(*base) * 100.0;
    }
    return d;
}

std::vector<MetricDelta> compare(const OverlapMetrics& a, const OverlapMetrics& b) {
    std::vector<MetricDelta> out;
    auto ratio = delta("overlap_ratio", a.overlap_ratio, b.overlap_ratio);
    if (ratio.base && ratio.candidate && *ratio.base > 0)
        ratio.regressionPct = (*ratio.base - *ratio.candidate) / *ratio.base * 100.0;
    else if (ratio.base && ratio.candidate && *ratio.base == 0 && *ratio.candidate == 0)
        ratio.regressionPct = 0;
    out.push_back(ratio);
    auto exposed = delta("exposed_comm_ns", ns(a.exposed_comm_ns), ns(b.exposed_comm_ns));
    const double change = *exposed.change;
    if (std::fabs(change) < kSmallestRegressionNs)
        exposed.regressionPct = 0;
    else if (a.exposed_comm_ns > 0)
        exposed.regressionPct = change / static_cast<double>(a.exposed_comm_ns) * 100.0;
    else
        exposed.regressionPct = change > 0 ? HUGE_VAL : 0;
    out.push_back(exposed);
    out.push_back(delta("window_ns", ns(a.window_ns), ns(b.window_ns)));
    out.push_back(delta("compute_ns", ns(a.compute_ns), ns(b.compute_ns)));
    out.push_back(delta("comm_ns", ns(a.comm_ns), ns(b.comm_ns)));
    out.push_back(delta("overlap_ns", ns(a.overlap_ns), ns(b.overlap_ns)));
    out.push_back(delta("busy_ns", ns(a.busy_ns), ns(b.busy_ns)));
    out.push_back(delta("idle_ns", ns(a.idle_ns), ns(b.idle_ns)));
    out.push_back(delta("achieved_speedup", a.achieved_speedup, b.achieved_speedup));
    out.push_back(delta("ideal_speedup", a.ideal_speedup, b.ideal_speedup));
    return out;
}

// The 4b/4c numbers, shown but not gated (a slower or more-waiting run shows
// up in the gated exposed communication already).
void appendInterferenceWait(std::vector<MetricDelta>& out, const InterferenceMetrics& a, const InterferenceMetrics& b,
                            const std::optional<WaitTransferMetrics>& wa,
                            const std::optional<WaitTransferMetrics>& wb) {
    out.push_back(delta("interference_ns", ns(a.interference_ns), ns(b.interference_ns)));
    out.push_back(delta("compute_slowdown", a.compute_slowdown, b.compute_slowdown));
    out.push_back(delta("net_overlap_gain_ns", ns(a.net_overlap_gain_ns), ns(b.net_overlap_gain_ns)));
    const auto field = [](const std::optional<WaitTransferMetrics>& w, TimeNs WaitTransferMetrics::*f) {
        return w && w->known() ? ns((*w).*f) : std::nullopt;
    };
    out.push_back(delta("comm_wait_ns", field(wa, &WaitTransferMetrics::comm_wait_ns),
                        field(wb, &WaitTransferMetrics::comm_wait_ns)));
    out.push_back(delta("exposed_wait_ns", field(wa, &WaitTransferMetrics::exposed_wait_ns),
                        field(wb, &WaitTransferMetrics::exposed_wait_ns)));
    out.push_back(delta("exposed_transfer_ns", field(wa, &WaitTransferMetrics::exposed_transfer_ns),
                        field(wb, &WaitTransferMetrics::exposed_transfer_ns)));
}

std::optional<double> optNs(const std::optional<TimeNs>& v) { return v ? ns(*v) : std::nullopt; }

// Pipeline bubble and exposed all-to-all (docs/metrics.md 7e/7f), shown, not gated.
void appendPatterns(std::vector<MetricDelta>& out, const std::optional<PipelineStageMetrics>& pa,
                    const std::optional<PipelineStageMetrics>& pb, const std::optional<AllToAllMetrics>& xa,
                    const std::optional<AllToAllMetrics>& xb) {
    const auto bubble = [](const std::optional<PipelineStageMetrics>& p) {
        return p ? ns(p->bubble_ns) : std::nullopt;
    };
    const auto share = [](const std::optional<PipelineStageMetrics>& p) { return p ? p->bubble_share : std::nullopt; };
    const auto exposed = [](const std::optional<AllToAllMetrics>& x) {
        return x ? ns(x->exposed_alltoall_ns) : std::nullopt;
    };
    out.push_back(delta("bubble_share", share(pa), share(pb)));
    out.push_back(delta("bubble_ns", bubble(pa), bubble(pb)));
    out.push_back(delta("exposed_alltoall_ns", exposed(xa), exposed(xb)));
}

// docs/design.md 4d: bus bandwidth against the link and the worst late
// arrival, shown, not gated.
void appendCollectiveHealth(std::vector<MetricDelta>& out, const DeviceAnalysis& a, const DeviceAnalysis& b) {
    const auto busbw = [](const DeviceAnalysis& d) { return d.busbw ? d.busbw->median_busbw_gbps : std::nullopt; };
    const auto fraction = [](const DeviceAnalysis& d) {
        return d.busbw ? d.busbw->median_busbw_fraction : std::nullopt;
    };
    const auto late = [](const DeviceAnalysis& d) {
        return d.straggler ? std::optional<double>(static_cast<double>(d.straggler->worst.late_ns)) : std::nullopt;
    };
    out.push_back(delta("median_busbw_gbps", busbw(a), busbw(b)));
    out.push_back(delta("median_busbw_fraction", fraction(a), fraction(b)));
    out.push_back(delta("straggler_late_ns", late(a), late(b)));
}

std::optional<double> worstImbalance(const Analysis& a) {
    double v = 0;
    return worstAllToAll(a, &v) ? std::optional<double>(v) : std::nullopt;
}

DiffRow row(DiffScope scope, std::string label, const OverlapMetrics& a, const OverlapMetrics& b) {
    DiffRow r;
    r.scope = scope;
    r.label = std::move(label);
    r.metrics = compare(a, b);
    for (const auto& m : r.metrics)
        if (m.regressionPct) r.worstRegressionPct = std::max(r.worstRegressionPct, *m.regressionPct);
    return r;
}

std::string deviceName(const DeviceAnalysis& d) {
    const std::string who =
        d.rank >= 0 ? "rank " + std::to_string(d.rank) : (d.host.empty() ? "" : d.host + ":") + std::to_string(d.pid);
    return who + " gpu " + std::to_string(d.device);
}

void sortWorstFirst(std::vector<DiffRow>& rows) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const DiffRow& x, const DiffRow& y) { return x.worstRegressionPct > y.worstRegressionPct; });
}

}  // namespace

DiffResult diffAnalyses(const Analysis& base, const Analysis& candidate, const NoiseOptions& noise) {
    DiffResult out;
    out.steps = compareSteps(base, candidate, noise);
    out.rows.push_back(row(DiffScope::Summary, "summary", base.summary, candidate.summary));
    {
        auto& m = out.rows.back().metrics;
        const auto pa = pipelineSummary(base), pb = pipelineSummary(candidate);
        m.push_back(delta("bubble_share", pa ? pa->bubble_share : std::nullopt, pb ? pb->bubble_share : std::nullopt));
        m.push_back(delta("bubble_ns", pa ? ns(pa->bubble_ns) : std::nullopt, pb ? ns(pb->bubble_ns) : std::nullopt));
        m.push_back(delta("exposed_alltoall_ns", optNs(exposedAllToAll(base)), optNs(exposedAllToAll(candidate))));
        m.push_back(delta("alltoall_imbalance", worstImbalance(base), worstImbalance(candidate)));
    }
    std::vector<DiffRow> devices, steps;
    const auto pairs = pairDevices(base, candidate);
    for (const DevicePair& p : pairs) {
        if (p.base < 0) continue;  // noted below
        const DeviceAnalysis* da = &base.devices[static_cast<size_t>(p.base)];
        if (p.candidate < 0) {
            out.notes.push_back(deviceName(*da) + " is only in the base");
            continue;
        }
        const DeviceAnalysis* db = &candidate.devices[static_cast<size_t>(p.candidate)];
        DiffRow r = row(DiffScope::Device, deviceName(*da), da->totals, db->totals);
        appendInterferenceWait(r.metrics, da->interference, db->interference, da->wait, db->wait);
        r.metrics.push_back(delta("last_arrivals",
                                  da->last_arrivals ? std::optional<double>(*da->last_arrivals) : std::nullopt,
                                  db->last_arrivals ? std::optional<double>(*db->last_arrivals) : std::nullopt));
        r.metrics.push_back(delta("delay_caused_ns", optNs(da->delay_caused_ns), optNs(db->delay_caused_ns)));
        appendPatterns(r.metrics, da->pipeline, db->pipeline, da->alltoall, db->alltoall);
        appendCollectiveHealth(r.metrics, *da, *db);
        r.rank = da->rank;
        r.device = da->device;
        r.baseDevice = p.base;
        r.candidateDevice = p.candidate;
        devices.push_back(std::move(r));
        const size_t n = std::min(da->steps.size(), db->steps.size());
        for (size_t s = 0; s < n; ++s) {
            std::string label = deviceName(*da) + " step " + std::to_string(s) + " (" + da->steps[s].name;
            if (db->steps[s].name != da->steps[s].name) label += " / " + db->steps[s].name;
            DiffRow sr = row(DiffScope::Step, label + ")", da->steps[s].metrics, db->steps[s].metrics);
            appendInterferenceWait(sr.metrics, da->steps[s].interference, db->steps[s].interference, da->steps[s].wait,
                                   db->steps[s].wait);
            appendPatterns(sr.metrics, da->steps[s].pipeline, db->steps[s].pipeline, da->steps[s].alltoall,
                           db->steps[s].alltoall);
            sr.rank = da->rank;
            sr.device = da->device;
            sr.step = static_cast<int>(s);
            sr.baseDevice = p.base;
            sr.candidateDevice = p.candidate;
            steps.push_back(std::move(sr));
        }
        if (da->steps.size() != db->steps.size())
            out.notes.push_back(deviceName(*da) + ": " + std::to_string(da->steps.size()) + " steps in the base, " +
                                std::to_string(db->steps.size()) + " in the candidate; compared the first " +
                                std::to_string(n));
    }
    for (const DevicePair& p : pairs)
        if (p.base < 0)
            out.notes.push_back(deviceName(candidate.devices[static_cast<size_t>(p.candidate)]) +
                                " is only in the candidate");
    sortWorstFirst(devices);
    sortWorstFirst(steps);
    out.worstRegressionPct = out.rows.front().worstRegressionPct;
    for (const auto& d : devices) out.worstRegressionPct = std::max(out.worstRegressionPct, d.worstRegressionPct);
    for (auto& r : devices) out.rows.push_back(std::move(r));
    for (auto& r : steps) out.rows.push_back(std::move(r));
    return out;
}

bool exceedsRegression(const DiffResult& diff, double percent) { return diff.worstRegressionPct > percent; }

}  // namespace osc::report

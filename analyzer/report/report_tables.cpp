#include "analyzer/report/report_tables.h"

#include "analyzer/report/report_format.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <unordered_map>

namespace osc::report {
namespace {

std::vector<std::string> metricCells(const OverlapMetrics& m) {
    return {formatDuration(m.window_ns),       formatDuration(m.compute_ns),
            formatDuration(m.comm_ns),         formatDuration(m.overlap_ns),
            formatDuration(m.exposed_comm_ns), formatDuration(m.idle_ns),
            formatPercent(m.overlap_ratio),    formatFactor(m.achieved_speedup),
            formatFactor(m.ideal_speedup),     verdict(m)};
}

std::string gbps(std::optional<double> v) {
    if (!v) return "n/a";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", *v);
    return buf;
}

// Each collective's issue position within its step, in one pass: a per-row
// count over earlier collectives made `--collectives --top 0` quadratic.
std::vector<int> stepPositions(const DeviceAnalysis& d) {
    std::vector<int> positions(d.collectives.size(), 0);
    std::unordered_map<int, int> seen;
    for (size_t i = 0; i < d.collectives.size(); ++i) positions[i] = seen[d.collectives[i].step]++;
    return positions;
}

// "AllReduce f32 #2": the collective and its issue position within its step.
std::string positionedName(const DeviceAnalysis& d, const std::vector<int>& positions, int index) {
    if (index < 0 || static_cast<size_t>(index) >= d.collectives.size()) return "-";
    const auto& c = d.collectives[static_cast<size_t>(index)];
    return describeCollective(c) + (c.step >= 0 ? " #" + std::to_string(positions[static_cast<size_t>(index)]) : "");
}

}  // namespace

TextTable totalsTable(const std::vector<DeviceAnalysis>& devices, const OverlapMetrics& summary) {
    TextTable t(
        {"device", "window", "compute", "comm", "overlap", "exposed", "idle", "hidden", "speedup", "ideal", "verdict"});
    for (const auto& d : devices) {
        auto cells = metricCells(d.totals);
        cells.insert(cells.begin(), deviceLabel(d));
        t.addRow(cells);
    }
    if (devices.size() > 1) {
        auto cells = metricCells(summary);
        cells.insert(cells.begin(), "all devices");
        t.addRow(cells);
    }
    return t;
}

TextTable stepsTable(const DeviceAnalysis& d) {
    TextTable t(
        {"step", "window", "compute", "comm", "exposed", "hidden", "bottleneck", "its exposed", "share", "verdict"});
    const auto positions = stepPositions(d);
    for (const auto& s : d.steps) {
        const auto& m = s.metrics;
        const auto& b = s.bottleneck;
        t.addRow({s.name, formatDuration(m.window_ns), formatDuration(m.compute_ns), formatDuration(m.comm_ns),
                  formatDuration(m.exposed_comm_ns), formatPercent(m.overlap_ratio),
                  positionedName(d, positions, b.collective), b.collective >= 0 ? formatDuration(b.exposed_ns) : "-",
                  formatPercent(b.share), stepVerdict(s)});
    }
    return t;
}

TextTable collectivesTable(const DeviceAnalysis& d, size_t top) {
    std::vector<size_t> order(d.collectives.size());
    std::iota(order.begin(), order.end(), size_t{0});
    const size_t n = top == 0 ? order.size() : std::min(top, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      [&](size_t x, size_t y) {
                          const auto& cx = d.collectives[x];
                          const auto& cy = d.collectives[y];
                          if (cx.exposed_ns != cy.exposed_ns) return cx.exposed_ns > cy.exposed_ns;
                          return x < y;
                      });
    TextTable t(
        {"collective", "step", "start", "duration", "exposed", "hidden", "bytes", "GB/s", "bus GB/s", "of peak"});
    const auto positions = stepPositions(d);
    for (size_t i = 0; i < n; ++i) {
        const auto& c = d.collectives[order[i]];
        const std::optional<double> hidden =
            c.duration_ns > 0
                ? std::optional<double>(static_cast<double>(c.overlapped_ns) / static_cast<double>(c.duration_ns))
                : std::nullopt;
        const std::string step = c.step >= 0 && static_cast<size_t>(c.step) < d.steps.size()
                                     ? d.steps[static_cast<size_t>(c.step)].name
                                     : "-";
        t.addRow({positionedName(d, positions, static_cast<int>(order[i])), step, formatDuration(c.start_ns),
                  formatDuration(c.duration_ns), formatDuration(c.exposed_ns), formatPercent(hidden),
                  formatBytes(c.bytes), gbps(c.bandwidth_gbps), gbps(c.busbw_gbps), formatPercent(c.busbw_fraction)});
    }
    return t;
}

TextTable busBandwidthTable(const DeviceAnalysis& d) {
    TextTable t({"collective", "size", "count", "alg GB/s", "bus GB/s", "of peak"});
    if (!d.busbw) return t;
    for (const auto& c : d.busbw->classes)
        t.addRow({c.collective.empty() ? "?" : c.collective, formatBytes(c.size_class) + "+", std::to_string(c.count),
                  gbps(c.median_algbw_gbps), gbps(c.median_busbw_gbps), formatPercent(c.median_busbw_fraction)});
    return t;
}

MatchedRow matchedRow(const MatchedCollective& m) {
    return {m.collective, m.seqNumber, m.instances.size(), m.skew_ns, m.transfer_ns};
}

TextTable matchedTable(const std::vector<MatchedRow>& rows, size_t top) {
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t{0});
    const size_t n = top == 0 ? order.size() : std::min(top, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      [&](size_t x, size_t y) {
                          if (rows[x].skew_ns != rows[y].skew_ns) return rows[x].skew_ns > rows[y].skew_ns;
                          return x < y;
                      });
    TextTable t({"collective", "seq", "ranks", "skew", "transfer"});
    for (size_t i = 0; i < n; ++i) {
        const auto& m = rows[order[i]];
        t.addRow({m.collective.empty() ? "?" : m.collective, m.seqNumber ? std::to_string(*m.seqNumber) : "-",
                  std::to_string(m.ranks), formatDuration(m.skew_ns), formatDuration(m.transfer_ns)});
    }
    return t;
}

std::vector<ReportedFinding> deviceFindings(const DeviceAnalysis& d) {
    std::vector<ReportedFinding> out;
    for (const auto& f : d.findings) out.push_back({f, 0});
    const size_t deviceLevel = out.size();
    auto onDevice = [&](FindingKind k) {
        for (size_t i = 0; i < deviceLevel; ++i)
            if (out[i].finding.kind == k) return true;
        return false;
    };
    for (const auto& s : d.steps) {
        for (const auto& f : s.bottleneck.findings) {
            if (onDevice(f.kind)) continue;
            auto it = std::find_if(out.begin() + static_cast<std::ptrdiff_t>(deviceLevel), out.end(),
                                   [&](const ReportedFinding& g) { return g.finding.kind == f.kind; });
            if (it == out.end()) {
                out.push_back({f, 1});
            } else {
                it->finding.exposed_ns += f.exposed_ns;
                ++it->steps;
            }
        }
    }
    return out;
}

std::string describeFinding(const ReportedFinding& f) {
    if (f.steps == 0) return f.finding.message;
    return f.finding.message + " (seen in " + std::to_string(f.steps) + (f.steps == 1 ? " step" : " steps") + "; " +
           formatDuration(f.finding.exposed_ns) + " exposed in total)";
}

}  // namespace osc::report

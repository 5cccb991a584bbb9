#include "gui/model/run_compare.h"

#include "gui/model/column_units.h"
#include "gui/model/time_ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace osc::gui {
namespace {

// A device's collectives by step: [0] outside steps, [s + 1] step s; each in
// start order. One pass, so a capture of many steps and collectives stays linear.
std::vector<std::vector<int>> collectivesByStep(const DeviceAnalysis& d) {
    std::vector<std::vector<int>> out(d.steps.size() + 1);
    for (size_t c = 0; c < d.collectives.size(); ++c) {
        const int step = d.collectives[c].step;
        const size_t slot = step >= 0 && static_cast<size_t>(step) < d.steps.size() ? static_cast<size_t>(step) + 1 : 0;
        out[slot].push_back(static_cast<int>(c));
    }
    for (auto& v : out)
        std::stable_sort(v.begin(), v.end(), [&d](int x, int y) {
            return d.collectives[static_cast<size_t>(x)].start_ns < d.collectives[static_cast<size_t>(y)].start_ns;
        });
    return out;
}

// The collectives of one step (or of none, step -1) of a device pair, k-th
// with k-th; returns whether both runs had as many.
bool pairStep(const DeviceAnalysis& a, const DeviceAnalysis& b, const std::vector<int>& x, const std::vector<int>& y,
              int baseDevice, int candidateDevice, int step, std::vector<CollectivePair>& out) {
    const size_t n = std::max(x.size(), y.size());
    for (size_t k = 0; k < n; ++k) {
        CollectivePair p;
        p.baseDevice = baseDevice;
        p.candidateDevice = candidateDevice;
        p.step = step;
        p.position = static_cast<int>(k);
        p.baseCollective = k < x.size() ? x[k] : -1;
        p.candidateCollective = k < y.size() ? y[k] : -1;
        if (p.baseCollective >= 0 && p.candidateCollective >= 0) {
            const CollectiveInstance& ca = a.collectives[static_cast<size_t>(p.baseCollective)];
            const CollectiveInstance& cb = b.collectives[static_cast<size_t>(p.candidateCollective)];
            p.durationChange = cb.duration_ns - ca.duration_ns;
            p.overlappedChange = cb.overlapped_ns - ca.overlapped_ns;
            p.exposedChange = cb.exposed_ns - ca.exposed_ns;
        }
        out.push_back(p);
    }
    return x.size() == y.size();
}

std::string deviceLabel(const DeviceAnalysis& d) {
    return (d.rank >= 0 ? "rank " + std::to_string(d.rank) : d.host + ":" + std::to_string(d.pid)) + " · GPU " +
           std::to_string(d.device);
}

std::string percentText(double v, int decimals) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// "+" or the minus sign (U+2212, as the tables print it) before a magnitude.
std::string signedText(double v, const std::string& magnitude) {
    if (v == 0) return magnitude;
    return (v > 0 ? "+" : "\u2212") + magnitude;
}

// " (−60.0 %)": a change's share of the base.
std::string relativeText(double pct) { return " (" + signedText(pct, percentText(std::fabs(pct), 1)) + " %)"; }

}  // namespace

RunComparison compareRuns(const Analysis& base, const Analysis& candidate) {
    RunComparison out;
    out.diff = report::diffAnalyses(base, candidate);
    out.notes = out.diff.notes;
    // The diff lists its rows worst first; the tables start in device and step order.
    std::map<int, int> devicePairs;  // base device -> candidate device
    for (size_t r = 0; r < out.diff.rows.size(); ++r) {
        const report::DiffRow& row = out.diff.rows[r];
        if (row.scope == report::DiffScope::Device) devicePairs[row.baseDevice] = row.candidateDevice;
        if (row.scope == report::DiffScope::Step)
            out.steps.push_back({row.baseDevice, row.candidateDevice, row.step, r});
    }
    std::sort(out.steps.begin(), out.steps.end(), [](const StepPair& x, const StepPair& y) {
        return std::pair(x.baseDevice, x.step) < std::pair(y.baseDevice, y.step);
    });
    for (const auto& [bi, ci] : devicePairs) {
        const DeviceAnalysis& a = base.devices[static_cast<size_t>(bi)];
        const DeviceAnalysis& b = candidate.devices[static_cast<size_t>(ci)];
        // Collectives of steps only one run has are left out, as the diff leaves those steps out.
        const int steps = static_cast<int>(std::min(a.steps.size(), b.steps.size()));
        const auto x = collectivesByStep(a), y = collectivesByStep(b);
        int uneven = 0;
        for (int s = 0; s < steps; ++s) {
            const size_t slot = static_cast<size_t>(s) + 1;
            uneven += pairStep(a, b, x[slot], y[slot], bi, ci, s, out.collectives) ? 0 : 1;
        }
        const bool outsideEven = pairStep(a, b, x[0], y[0], bi, ci, -1, out.collectives);
        if (uneven > 0)
            out.notes.push_back(deviceLabel(a) + ": " + std::to_string(uneven) + " of " + std::to_string(steps) +
                                " steps ran a different number of collectives; the extra ones have no partner");
        if (!outsideEven) out.notes.push_back(deviceLabel(a) + ": a different number of collectives outside steps");
    }
    return out;
}

const report::MetricDelta* findMetric(const report::DiffRow& row, std::string_view name) {
    for (const report::MetricDelta& m : row.metrics)
        if (m.name == name) return &m;
    return nullptr;
}

std::string changeText(TimeNs change, const ColumnUnit& unit, std::optional<double> relativePct) {
    if (change == 0) return "0";  // "0.000 ms" would read as a change rounded away
    std::string text = signedText(static_cast<double>(change), formatInUnit(change < 0 ? -change : change, unit));
    if (relativePct && std::isfinite(*relativePct) && *relativePct != 0) text += relativeText(*relativePct);
    return text;
}

std::string pointsText(double change) {
    return signedText(std::round(change * 1000) / 1000, percentText(std::fabs(change) * 100.0, 1)) + " pts";
}

std::string summaryText(const RunComparison& c) {
    if (c.diff.rows.empty()) return {};
    const report::DiffRow& s = c.diff.rows.front();
    std::string text;
    if (const auto* e = findMetric(s, "exposed_comm_ns"); e && e->base && e->candidate) {
        text += "exposed communication " + formatDuration(static_cast<TimeNs>(*e->base)) + " \u2192 " +
                formatDuration(static_cast<TimeNs>(*e->candidate));
        if (e->relativePct) text += relativeText(*e->relativePct);
    }
    if (const auto* r = findMetric(s, "overlap_ratio"); r && r->base && r->candidate) {
        if (!text.empty()) text += "; ";
        text += "hidden " + percentText(*r->base * 100, 1) + " % \u2192 " + percentText(*r->candidate * 100, 1) +
                " % (" + pointsText(*r->change) + ")";
    }
    if (const auto* w = findMetric(s, "window_ns"); w && w->base && w->candidate) {
        if (!text.empty()) text += "; ";
        text += "window " + formatDuration(static_cast<TimeNs>(*w->base)) + " \u2192 " +
                formatDuration(static_cast<TimeNs>(*w->candidate));
        if (w->relativePct) text += relativeText(*w->relativePct);
    }
    return text;
}

}  // namespace osc::gui

#include "gui/model/run_compare.h"

#include "gui/model/column_units.h"
#include "gui/model/kernel_links.h"
#include "gui/model/time_ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

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

// "ranks 0–3", "ranks 0, 2": a communicator known by who ran it.
std::string rankSetText(const std::set<int>& ranks) {
    std::string out = ranks.size() == 1 ? "rank " : "ranks ";
    bool first = true;
    for (auto it = ranks.begin(); it != ranks.end();) {
        auto last = it;
        while (std::next(last) != ranks.end() && *std::next(last) == *last + 1) ++last;
        out += (first ? "" : ", ") + std::to_string(*it);
        if (last != it) out += (*last == *it + 1 ? ", " : "–") + std::to_string(*last);
        first = false;
        it = std::next(last);
    }
    return out;
}

// Per communicator hash, the ranks that ran it (a device without a rank
// counts by its place in the job).
std::map<uint64_t, std::string> groupsOf(const Analysis& a) {
    std::map<uint64_t, std::set<int>> ranks;
    for (size_t d = 0; d < a.devices.size(); ++d) {
        const DeviceAnalysis& dev = a.devices[d];
        for (const CollectiveInstance& c : dev.collectives)
            if (c.commHash) ranks[*c.commHash].insert(dev.rank >= 0 ? dev.rank : static_cast<int>(d));
    }
    std::map<uint64_t, std::string> out;
    for (const auto& [hash, set] : ranks) out[hash] = rankSetText(set);
    return out;
}

// What pairs a collective with its partner in the other run.
struct Identity {
    std::string collective, group;
    std::optional<uint64_t> bytes;
    int bucket = 0;
    auto operator<=>(const Identity&) const = default;
};

std::vector<Identity> identities(const DeviceAnalysis& d, const std::vector<int>& ops,
                                 const std::map<uint64_t, std::string>& groups) {
    std::vector<Identity> out;
    std::map<Identity, int> seen;  // bucket 0 of each (type, group, bytes): how many so far
    for (int i : ops) {
        const CollectiveInstance& c = d.collectives[static_cast<size_t>(i)];
        Identity id{c.collectiveOrName().str(), c.commHash ? groups.at(*c.commHash) : std::string(), c.bytes, 0};
        id.bucket = seen[id]++;
        out.push_back(std::move(id));
    }
    return out;
}

struct Unpaired {
    int base = 0, candidate = 0;
};

// The collectives of one step (or of none, step -1) of a device pair, paired by identity.
Unpaired pairStep(const DeviceAnalysis& a, const DeviceAnalysis& b, const std::vector<int>& x,
                  const std::vector<int>& y, const std::map<uint64_t, std::string>& groupsA,
                  const std::map<uint64_t, std::string>& groupsB, int baseDevice, int candidateDevice, int step,
                  std::vector<CollectivePair>& out) {
    const std::vector<Identity> ix = identities(a, x, groupsA), iy = identities(b, y, groupsB);
    std::map<Identity, size_t> inB;
    for (size_t k = 0; k < iy.size(); ++k) inB.emplace(iy[k], k);
    std::vector<bool> used(y.size(), false);
    Unpaired unpaired;
    const auto add = [&](const Identity& id, int ca, int cb) {
        CollectivePair p;
        p.baseDevice = baseDevice;
        p.candidateDevice = candidateDevice;
        p.step = step;
        p.group = id.group;
        p.bucket = id.bucket;
        p.baseCollective = ca;
        p.candidateCollective = cb;
        if (ca >= 0 && cb >= 0) {
            const CollectiveInstance& oa = a.collectives[static_cast<size_t>(ca)];
            const CollectiveInstance& ob = b.collectives[static_cast<size_t>(cb)];
            p.durationChange = ob.duration_ns - oa.duration_ns;
            p.overlappedChange = ob.overlapped_ns - oa.overlapped_ns;
            p.exposedChange = ob.exposed_ns - oa.exposed_ns;
        }
        out.push_back(p);
    };
    for (size_t k = 0; k < ix.size(); ++k) {
        const auto it = inB.find(ix[k]);
        if (it != inB.end()) used[it->second] = true;
        if (it == inB.end()) ++unpaired.base;
        add(ix[k], x[k], it != inB.end() ? y[it->second] : -1);
    }
    for (size_t k = 0; k < iy.size(); ++k)
        if (!used[k]) {
            ++unpaired.candidate;
            add(iy[k], -1, y[k]);
        }
    return unpaired;
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
    const auto groupsA = groupsOf(base), groupsB = groupsOf(candidate);
    for (const auto& [bi, ci] : devicePairs) {
        const DeviceAnalysis& a = base.devices[static_cast<size_t>(bi)];
        const DeviceAnalysis& b = candidate.devices[static_cast<size_t>(ci)];
        // Collectives of steps only one run has are left out, as the diff leaves those steps out.
        const int steps = static_cast<int>(std::min(a.steps.size(), b.steps.size()));
        const auto x = collectivesByStep(a), y = collectivesByStep(b);
        Unpaired device;
        // The steps in order, then the collectives outside them.
        for (int k = 0; k <= steps; ++k) {
            const int s = k < steps ? k : -1;
            const size_t slot = static_cast<size_t>(s + 1);
            const Unpaired u = pairStep(a, b, x[slot], y[slot], groupsA, groupsB, bi, ci, s, out.collectives);
            device.base += u.base;
            device.candidate += u.candidate;
        }
        out.onlyInBase += static_cast<size_t>(device.base);
        out.onlyInCandidate += static_cast<size_t>(device.candidate);
        if (device.base > 0 || device.candidate > 0)
            out.notes.push_back(deviceLabel(a) + ": " + std::to_string(device.base) + " collective" +
                                (device.base == 1 ? "" : "s") + " only in A, " + std::to_string(device.candidate) +
                                " only in B (no collective of the same type, group, size and bucket in the same step "
                                "of the other run)");
    }
    for (const CollectivePair& p : out.collectives)
        if (p.baseCollective >= 0 && p.candidateCollective >= 0) ++out.collectivesPaired;
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

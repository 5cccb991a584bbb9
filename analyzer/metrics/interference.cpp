#include "analyzer/metrics/interference.h"

#include "analyzer/metrics/metric_sum.h"

#include <algorithm>
#include <array>
#include <tuple>

#include <tsl/robin_map.h>

namespace osc {
namespace {

// (name id, grid x/y/z, block x/y/z); absent launch details count as 0.
using SignatureKey = std::array<uint32_t, 7>;

struct KeyHash {
    size_t operator()(const SignatureKey& k) const {
        uint64_t h = 1469598103934665603ull;
        for (uint32_t v : k) h = (h ^ v) * 1099511628211ull;
        return static_cast<size_t>(h);
    }
};

struct SignatureDurations {
    std::vector<TimeNs> isolated, overlapped;
};

uint32_t column(const std::vector<uint32_t>& c, size_t i) { return i < c.size() ? c[i] : 0; }

}  // namespace

InterferenceIndex::InterferenceIndex(const Capture& capture, const Device& device, ActivityClassifier& classifier,
                                     const DeviceCoverage& coverage)
    : kernels_(device.kernels) {
    const auto& k = device.kernels;
    sorted_ = std::is_sorted(k.start.begin(), k.start.end());
    slotOf_.assign(k.size(), kNotOverlapped);
    tsl::robin_map<SignatureKey, uint32_t, KeyHash> slotOf;
    std::vector<SignatureKey> keys;
    std::vector<SignatureDurations> durations;
    // Kernels in start order (as every reader leaves them) walk the coverage
    // forward instead of searching all of it twice per kernel.
    CoverageWalker walker(coverage.comm);
    for (size_t i = 0; i < k.size(); ++i) {
        const TimeNs d = k.end[i] - k.start[i];
        if (d <= 0) continue;
        const uint32_t nameId = kernelNameId(k, i);
        if (classifier.kernel(nameId) != Category::Compute) continue;
        const TimeNs ov = sorted_ ? walker.covered(k.start[i], k.end[i]) : coverage.comm.covered(k.start[i], k.end[i]);
        const bool isolated = ov == 0, overlapped = ov >= d - ov;  // at least half; 2 * ov may not fit
        if (!isolated && !overlapped) continue;
        const SignatureKey key{nameId,
                               column(k.gridX, i),
                               column(k.gridY, i),
                               column(k.gridZ, i),
                               column(k.blockX, i),
                               column(k.blockY, i),
                               column(k.blockZ, i)};
        auto [it, added] = slotOf.try_emplace(key, static_cast<uint32_t>(keys.size()));
        if (added) {
            keys.push_back(key);
            durations.emplace_back();
        }
        if (isolated) {
            durations[it->second].isolated.push_back(d);
        } else {
            durations[it->second].overlapped.push_back(d);
            slotOf_[i] = it->second;
        }
    }

    std::vector<TimeNs>& baseline = baseline_;
    baseline.assign(keys.size(), -1);
    for (size_t s = 0; s < keys.size(); ++s) {
        auto& iso = durations[s].isolated;
        if (iso.size() >= 3) baseline[s] = lowerMedian(iso);
    }

    for (size_t s = 0; s < keys.size(); ++s) {
        auto& dur = durations[s];
        if (dur.overlapped.empty()) continue;
        SignatureInterference row;
        row.name = std::string(capture.strings.at(keys[s][0]));
        for (size_t a = 0; a < 3; ++a) {
            row.grid[a] = keys[s][1 + a];
            row.block[a] = keys[s][4 + a];
        }
        row.isolated = static_cast<int>(dur.isolated.size());
        row.overlapped = static_cast<int>(dur.overlapped.size());
        if (baseline[s] >= 0) {
            row.baseline_ns = baseline[s];
            TimeNs sum = 0;
            for (TimeNs d : dur.overlapped) sum = saturatingAdd(sum, d - baseline[s]);
            row.slowdown_ns = sum;
        }
        row.median_overlapped_ns = lowerMedian(std::move(dur.overlapped));
        signatures_.push_back(std::move(row));
    }
    std::stable_sort(signatures_.begin(), signatures_.end(),
                     [](const SignatureInterference& a, const SignatureInterference& b) {
                         if (a.slowdown_ns.has_value() != b.slowdown_ns.has_value()) return a.slowdown_ns.has_value();
                         if (a.slowdown_ns != b.slowdown_ns) return *a.slowdown_ns > *b.slowdown_ns;
                         return std::tie(a.name, a.grid, a.block) < std::tie(b.name, b.grid, b.block);
                     });
}

InterferenceMetrics InterferenceIndex::over(Interval window, TimeNs overlap_ns) const {
    InterferenceMetrics m;
    const auto& k = kernels_;
    size_t i = 0, end = k.size();
    if (sorted_) {
        i = static_cast<size_t>(std::lower_bound(k.start.begin(), k.start.end(), window.start) - k.start.begin());
        end = static_cast<size_t>(std::lower_bound(k.start.begin(), k.start.end(), window.end) - k.start.begin());
    }
    for (; i < end; ++i) {
        const uint32_t slot = slotOf_[i];
        if (slot == kNotOverlapped || k.start[i] < window.start || k.start[i] >= window.end) continue;
        const TimeNs d = k.end[i] - k.start[i];
        // Overlapping kernels' durations can add up past 2^63 ns: saturate.
        m.overlapped_compute_ns = saturatingAdd(m.overlapped_compute_ns, d);
        const TimeNs base = baseline_[slot];
        if (base < 0) continue;
        m.interfered_compute_ns = saturatingAdd(m.interfered_compute_ns, d);
        m.interference_ns = saturatingAdd(m.interference_ns, d - base);
    }
    if (m.overlapped_compute_ns > 0)
        m.interference_coverage =
            static_cast<double>(m.interfered_compute_ns) / static_cast<double>(m.overlapped_compute_ns);
    const TimeNs base = saturatingSub(m.interfered_compute_ns, m.interference_ns);
    if (base > 0) m.compute_slowdown = static_cast<double>(m.interference_ns) / static_cast<double>(base);
    m.net_overlap_gain_ns = saturatingSub(overlap_ns, m.interference_ns);
    return m;
}

}  // namespace osc

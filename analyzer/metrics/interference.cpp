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

}  // namespace

InterferenceIndex::InterferenceIndex(const Capture& capture, const Device& device, ActivityClassifier& classifier,
                                     const DeviceCoverage& coverage)
    : kernels_(device.kernels) {
    const auto& k = device.kernels;
    sorted_ = std::is_sorted(k.start.begin(), k.start.end());
    slotOf_.assign(k.size(), kNotOverlapped);
    tsl::robin_map<SignatureKey, uint32_t, WordsHash> slotOf;
    std::vector<SignatureKey> keys;
    // Per signature: how many isolated and overlapped kernels it has. Their
    // durations are then laid out once, each signature's together, in
    // arrays of exactly that size (vectors grown kernel by kernel held up to
    // twice that: at 1 M kernels this index was a tenth of a report's peak).
    std::vector<uint32_t> isolatedCount, overlappedCount;
    TimeNs longest = 0;
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
        const LaunchShape shape = k.launchShape(i);
        const SignatureKey key{nameId, shape[0], shape[1], shape[2], shape[3], shape[4], shape[5]};
        auto [it, added] = slotOf.try_emplace(key, static_cast<uint32_t>(keys.size()));
        if (added) {
            keys.push_back(key);
            isolatedCount.push_back(0);
            overlappedCount.push_back(0);
        }
        // Until the durations are laid out, an isolated kernel's slot carries kIsolated.
        slotOf_[i] = it->second | (isolated ? kIsolated : 0);
        longest = std::max(longest, d);
        ++(isolated ? isolatedCount : overlappedCount)[it->second];
    }

    // Each signature's durations in kernel order, from its first offset; in
    // 32 bits when every one fits (under 4.3 s), which halves them.
    std::vector<size_t> isolatedAt(keys.size() + 1, 0), overlappedAt(keys.size() + 1, 0);
    for (size_t s = 0; s < keys.size(); ++s) {
        isolatedAt[s + 1] = isolatedAt[s] + isolatedCount[s];
        overlappedAt[s + 1] = overlappedAt[s] + overlappedCount[s];
    }
    const auto summarize = [&]<typename Ns>(std::vector<Ns> isolatedNs, std::vector<Ns> overlappedNs) {
        std::vector<size_t> nextIsolated(isolatedAt.begin(), isolatedAt.end() - 1);
        std::vector<size_t> nextOverlapped(overlappedAt.begin(), overlappedAt.end() - 1);
        for (size_t i = 0; i < k.size(); ++i) {
            uint32_t& slot = slotOf_[i];
            if (slot == kNotOverlapped) continue;
            const auto d = static_cast<Ns>(k.end[i] - k.start[i]);
            if (slot & kIsolated) {
                isolatedNs[nextIsolated[slot & ~kIsolated]++] = d;
                slot = kNotOverlapped;
            } else {
                overlappedNs[nextOverlapped[slot]++] = d;
            }
        }
        const auto lowerMedianOf = [](std::vector<Ns>& values, size_t from, size_t to) {
            const auto first = values.begin();
            return static_cast<TimeNs>(
                lowerMedianInPlace(first + static_cast<std::ptrdiff_t>(from), first + static_cast<std::ptrdiff_t>(to)));
        };

        baseline_.assign(keys.size(), -1);
        for (size_t s = 0; s < keys.size(); ++s)
            if (isolatedCount[s] >= 3) baseline_[s] = lowerMedianOf(isolatedNs, isolatedAt[s], isolatedAt[s + 1]);

        for (size_t s = 0; s < keys.size(); ++s) {
            if (overlappedCount[s] == 0) continue;
            SignatureInterference row;
            row.name = std::string(capture.strings.at(keys[s][0]));
            for (size_t a = 0; a < 3; ++a) {
                row.grid[a] = keys[s][1 + a];
                row.block[a] = keys[s][4 + a];
            }
            row.isolated = static_cast<int>(isolatedCount[s]);
            row.overlapped = static_cast<int>(overlappedCount[s]);
            if (baseline_[s] >= 0) {
                row.baseline_ns = baseline_[s];
                TimeNs sum = 0;  // in kernel order, before the median reorders them
                for (size_t j = overlappedAt[s]; j < overlappedAt[s + 1]; ++j)
                    sum = saturatingAdd(sum, static_cast<TimeNs>(overlappedNs[j]) - baseline_[s]);
                row.slowdown_ns = sum;
            }
            row.median_overlapped_ns = lowerMedianOf(overlappedNs, overlappedAt[s], overlappedAt[s + 1]);
            signatures_.push_back(std::move(row));
        }
    };
    if (longest <= TimeNs{UINT32_MAX})
        summarize(std::vector<uint32_t>(isolatedAt.back()), std::vector<uint32_t>(overlappedAt.back()));
    else
        summarize(std::vector<TimeNs>(isolatedAt.back()), std::vector<TimeNs>(overlappedAt.back()));
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

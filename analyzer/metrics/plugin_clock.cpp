#include "analyzer/metrics/plugin_clock.h"

#include <algorithm>
#include <cstdlib>

namespace osc {
namespace {

constexpr size_t kCandidateRows = 16;        // rows whose neighbours propose shifts
constexpr size_t kNeighbours = 32;           // kernels per side each of those pairs with
constexpr size_t kScoredRows = 1024;         // rows a shift is judged on (a sample of long captures)
constexpr TimeNs kSearchNs = 1'000'000'000;  // clocks further apart than 1 s are not looked for

TimeNs tolerance(TimeNs duration) { return std::max<TimeNs>(10'000, duration / 20); }

bool valid(const TimedSpan& s) { return s.end >= s.start; }

std::vector<size_t> sample(const std::vector<TimedSpan>& rows) {
    std::vector<size_t> picked;
    for (size_t i = 0; i < rows.size(); ++i)
        if (valid(rows[i])) picked.push_back(i);
    if (picked.size() <= kScoredRows) return picked;
    std::vector<size_t> even;
    for (size_t j = 0; j < kScoredRows; ++j) even.push_back(picked[j * picked.size() / kScoredRows]);
    return even;
}

size_t score(const std::vector<TimedSpan>& rows, const std::vector<size_t>& judged,
             const std::vector<TimedSpan>& kernels, TimeNs shift) {
    size_t n = 0;
    for (size_t i : judged) n += kernelMatchingRow(kernels, rows[i].start + shift, rows[i].end - rows[i].start) >= 0;
    return n;
}

}  // namespace

namespace {

// The kernel starting nearest `start` within `tol` that `fits`; -1 when none.
template <typename Fits>
long nearestStart(const std::vector<TimedSpan>& kernels, TimeNs start, TimeNs tol, Fits fits) {
    auto it = std::lower_bound(kernels.begin(), kernels.end(), start - tol,
                               [](const TimedSpan& k, TimeNs v) { return k.start < v; });
    long best = -1;
    TimeNs bestDistance = 0;
    for (; it != kernels.end() && it->start <= start + tol; ++it) {
        if (!fits(*it)) continue;
        const TimeNs distance = std::llabs(it->start - start);
        if (best < 0 || distance < bestDistance) best = it - kernels.begin(), bestDistance = distance;
    }
    return best;
}

}  // namespace

long kernelMatchingRow(const std::vector<TimedSpan>& kernels, TimeNs start, TimeNs duration) {
    const TimeNs tol = tolerance(duration);
    return nearestStart(kernels, start, tol,
                        [&](const TimedSpan& k) { return std::llabs((k.end - k.start) - duration) <= tol; });
}

long kernelStartingNear(const std::vector<TimedSpan>& kernels, TimeNs start, TimeNs duration) {
    return nearestStart(kernels, start, tolerance(duration), [](const TimedSpan&) { return true; });
}

TimeNs pluginClockOffset(const std::vector<TimedSpan>& rows, const std::vector<TimedSpan>& kernels) {
    if (rows.empty() || kernels.empty()) return 0;
    const std::vector<size_t> judged = sample(rows);
    // Shifts proposed by pairing each of the first rows with every kernel
    // nearby of about its duration.
    std::vector<TimeNs> candidates;
    size_t proposers = 0;
    for (size_t i = 0; i < rows.size() && proposers < kCandidateRows; ++i) {
        if (!valid(rows[i])) continue;
        ++proposers;
        const TimeNs duration = rows[i].end - rows[i].start;
        const auto alike = [&](const TimedSpan& k) {
            return std::llabs((k.end - k.start) - duration) <= tolerance(duration) &&
                   std::llabs(k.start - rows[i].start) <= kSearchNs;
        };
        // The nearest kernels of about its duration on either side.
        const auto at = std::lower_bound(kernels.begin(), kernels.end(), rows[i].start,
                                         [](const TimedSpan& k, TimeNs v) { return k.start < v; });
        size_t found = 0;
        for (auto it = at; it != kernels.end() && found < kNeighbours; ++it)
            if (alike(*it)) candidates.push_back(it->start - rows[i].start), ++found;
        found = 0;
        for (auto it = at; it != kernels.begin() && found < kNeighbours;)
            if (alike(*--it)) candidates.push_back(it->start - rows[i].start), ++found;
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

    TimeNs best = 0;
    size_t bestScore = score(rows, judged, kernels, 0);
    for (TimeNs shift : candidates) {
        const size_t s = score(rows, judged, kernels, shift);
        if (s > bestScore || (s == bestScore && s > 0 && best != 0 && std::llabs(shift) < std::llabs(best))) {
            best = shift;
            bestScore = s;
        }
    }
    if (best == 0 || bestScore == 0) return 0;
    // Refine: the median start difference of the pairs the shift makes.
    std::vector<TimeNs> diffs;
    for (size_t i : judged) {
        const long k = kernelMatchingRow(kernels, rows[i].start + best, rows[i].end - rows[i].start);
        if (k >= 0) diffs.push_back(kernels[static_cast<size_t>(k)].start - rows[i].start);
    }
    std::nth_element(diffs.begin(), diffs.begin() + static_cast<std::ptrdiff_t>(diffs.size() / 2), diffs.end());
    return diffs[diffs.size() / 2];
}

}  // namespace osc

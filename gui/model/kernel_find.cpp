#include "gui/model/kernel_find.h"

#include "analyzer/metrics/metric_sum.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

namespace osc::gui {
namespace {

bool containsNoCase(std::string_view hay, std::string_view needle) {
    if (needle.empty()) return true;
    auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
    });
    return it != hay.end();
}

}  // namespace

FindResult findKernels(const TimelineModel& model, const FindQuery& query) {
    FindResult result;
    if (model.empty() || query.pattern.empty()) return result;
    const StringTable& strings = model.capture().strings;
    // Match each distinct name once; kernels repeat a few names many times.
    std::vector<int8_t> match(strings.size(), -1);
    auto matches = [&](uint32_t id) {
        if (id >= match.size()) return false;
        if (match[id] < 0) match[id] = containsNoCase(strings.at(id), query.pattern) ? 1 : 0;
        return match[id] == 1;
    };

    result.byLane.resize(model.lanes().size());
    std::vector<TimeNs> durations;
    for (size_t l = 0; l < model.lanes().size(); ++l) {
        const Lane& lane = model.lanes()[l];
        if (lane.kind != LaneKind::Stream) continue;
        const Device* dev = model.deviceOf(lane.group);
        const EventRow& row = lane.rows[0];
        size_t i = 0, end = row.size();
        if (query.range) {
            i = row.gallopToStart(0, query.range->start);
            end = row.gallopToStart(i, query.range->end);
        }
        auto& mine = result.byLane[l];
        for (; i < end; ++i) {
            if (row.source[i] != EventSource::Kernel) continue;
            const uint32_t k = row.ref[i];
            if (!matches(dev->kernels.name[k]) && !matches(dev->kernels.shortName[k])) continue;
            durations.push_back(row.end[i] - row.start[i]);
            mine.push_back(static_cast<uint32_t>(i));
        }
    }
    result.count = durations.size();
    if (durations.empty()) return result;
    // Time order across lanes: a k-way merge of the per-lane lists would do,
    // but one sort of (start, lane, index) keys is simpler and fast enough.
    struct Key {
        TimeNs start;
        FindHit hit;
    };
    std::vector<Key> keys;
    keys.reserve(result.count);
    for (size_t l = 0; l < result.byLane.size(); ++l) {
        const EventRow* row = result.byLane[l].empty() ? nullptr : &model.lanes()[l].rows[0];
        for (uint32_t i : result.byLane[l]) keys.push_back({row->start[i], {static_cast<int32_t>(l), i}});
    }
    std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) { return a.start < b.start; });
    result.hits.reserve(keys.size());
    for (const auto& k : keys) result.hits.push_back(k.hit);
    for (TimeNs d : durations) result.total_ns += d;
    const auto [mn, mx] = std::minmax_element(durations.begin(), durations.end());
    result.min_ns = *mn;
    result.max_ns = *mx;
    result.median_ns = lowerMedian(std::move(durations));  // the report's median: a duration that occurred
    return result;
}

long FindResult::nextAfter(TimeNs t, int direction, const TimelineModel& model) const {
    if (hits.empty()) return -1;
    const auto startOf = [&](const FindHit& h) { return model.lane(h.lane).rows[0].start[h.index]; };
    const auto n = static_cast<long>(hits.size());
    if (direction > 0) {
        const auto it =
            std::upper_bound(hits.begin(), hits.end(), t, [&](TimeNs v, const FindHit& h) { return v < startOf(h); });
        const long i = it - hits.begin();
        return i < n ? i : 0;
    }
    const auto it =
        std::lower_bound(hits.begin(), hits.end(), t, [&](const FindHit& h, TimeNs v) { return startOf(h) < v; });
    const long i = (it - hits.begin()) - 1;
    return i >= 0 ? i : n - 1;
}

std::vector<uint32_t> visibleHits(const EventRow& row, const std::vector<uint32_t>& laneHits, const TimeScale& scale) {
    std::vector<uint32_t> out;
    if (laneHits.empty()) return out;
    const ViewRange v = scale.range();
    // endMax is monotonic in the row index, so also along the hit list.
    auto it = std::upper_bound(laneHits.begin(), laneHits.end(), v.start,
                               [&](TimeNs t, uint32_t i) { return t < row.endMax[i]; });
    // Hits before the view that no longer run: a few are stepped over one by
    // one (one of them may still run into the view), then the search jumps
    // to the first hit starting inside it.
    for (int scanned = 0; it != laneHits.end() && row.start[*it] < v.start && row.end[*it] <= v.start; ++scanned) {
        if (scanned == 64) {
            it = std::lower_bound(it, laneHits.end(), v.start, [&](uint32_t i, TimeNs t) { return row.start[i] < t; });
            break;
        }
        ++it;
    }
    while (it != laneHits.end() && row.start[*it] < v.end) {
        if (row.end[*it] > v.start) out.push_back(*it);
        // Skip the rest of this pixel column: to the first time whose x is
        // in the next one (toTime rounds, so step to the exact boundary).
        const double col = std::floor(std::max(0.0, scale.toX(row.start[*it])));
        TimeNs next = scale.toTime(col + 1);
        while (std::floor(scale.toX(next - 1)) >= col + 1) --next;
        while (std::floor(scale.toX(next)) < col + 1) ++next;
        it = std::lower_bound(it + 1, laneHits.end(), next, [&](uint32_t i, TimeNs t) { return row.start[i] < t; });
    }
    return out;
}

}  // namespace osc::gui

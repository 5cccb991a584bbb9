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

const std::vector<uint32_t>& FindResult::hitsOf(int lane, int row) const {
    static const std::vector<uint32_t> kNone;
    if (lane < 0 || static_cast<size_t>(lane) >= rowBase.size()) return kNone;
    const size_t i = rowBase[static_cast<size_t>(lane)] + static_cast<size_t>(row);
    const size_t end =
        static_cast<size_t>(lane) + 1 < rowBase.size() ? rowBase[static_cast<size_t>(lane) + 1] : byRow.size();
    return row >= 0 && i < end ? byRow[i] : kNone;
}

FindResult findKernels(const TimelineModel& model, FindQuery query) {
    query.everything = false;
    return findEvents(model, query);
}

FindResult findEvents(const TimelineModel& model, const FindQuery& query) {
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

    const auto& lanes = model.lanes();
    result.rowBase.reserve(lanes.size());
    for (const Lane& lane : lanes) {
        result.rowBase.push_back(static_cast<uint32_t>(result.byRow.size()));
        result.byRow.resize(result.byRow.size() + lane.rows.size());
    }
    std::vector<TimeNs> durations;
    for (size_t l = 0; l < lanes.size(); ++l) {
        const Lane& lane = lanes[l];
        const bool stream = lane.kind == LaneKind::Stream;
        if (!stream && !(query.everything && (lane.kind == LaneKind::Ranges || lane.kind == LaneKind::Host))) continue;
        const Device* dev = stream ? model.deviceOf(lane.group) : nullptr;
        const Process& proc = model.processOf(lane.group);
        for (size_t r = 0; r < lane.rows.size(); ++r) {
            const EventRow& row = lane.rows[r];
            size_t i = 0, end = row.size();
            if (query.range) {
                i = row.gallopToStart(0, query.range->start);
                end = row.gallopToStart(i, query.range->end);
            }
            auto& mine = result.byRow[result.rowBase[l] + r];
            for (; i < end; ++i) {
                const uint32_t k = row.ref[i];
                size_t* kind = nullptr;
                switch (row.source[i]) {
                    case EventSource::Kernel:
                        if (dev && (matches(dev->kernels.name[k]) || matches(dev->kernels.shortName[k])))
                            kind = &result.kernels;
                        break;
                    case EventSource::Range:
                        if (matches(proc.ranges.name[k])) kind = &result.ranges;
                        break;
                    case EventSource::CpuOp:
                        if (matches(proc.cpuOps.name[k])) kind = &result.operators;
                        break;
                    case EventSource::ApiCall:
                        if (matches(proc.apiCalls.name[k])) kind = &result.calls;
                        break;
                    default:
                        break;
                }
                if (!kind) continue;
                ++*kind;
                durations.push_back(row.end[i] - row.start[i]);
                mine.push_back(static_cast<uint32_t>(i));
            }
        }
    }
    result.count = durations.size();
    if (durations.empty()) return result;
    // Time order across lanes: a k-way merge of the per-row lists would do,
    // but one sort of (start, lane, row, index) keys is simpler and fast enough.
    struct Key {
        TimeNs start;
        FindHit hit;
    };
    std::vector<Key> keys;
    keys.reserve(result.count);
    for (size_t l = 0; l < lanes.size(); ++l)
        for (size_t r = 0; r < lanes[l].rows.size(); ++r) {
            const EventRow& row = lanes[l].rows[r];
            for (uint32_t i : result.byRow[result.rowBase[l] + r])
                keys.push_back({row.start[i], {static_cast<int32_t>(l), static_cast<int32_t>(r), i}});
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
    const auto startOf = [&](const FindHit& h) {
        return model.lane(h.lane).rows[static_cast<size_t>(h.row)].start[h.index];
    };
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
                               [&](TimeNs t, uint32_t i) { return t < row.endMaxAt(i); });
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

#include "gui/model/kernel_find.h"

#include <algorithm>
#include <cctype>

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

    struct Hit {
        TimeNs start;
        EventRef ref;
    };
    std::vector<Hit> hits;
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
        for (; i < end; ++i) {
            if (row.source[i] != EventSource::Kernel) continue;
            const uint32_t k = row.ref[i];
            if (!matches(dev->kernels.name[k]) && !matches(dev->kernels.shortName[k])) continue;
            durations.push_back(row.end[i] - row.start[i]);
            if (hits.size() < query.maxHits) {
                hits.push_back({row.start[i], {static_cast<int>(l), 0, i}});
            } else {
                result.truncated = true;
            }
        }
    }
    result.count = durations.size();
    if (durations.empty()) return result;
    std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.start < b.start; });
    result.hits.reserve(hits.size());
    for (const auto& h : hits) result.hits.push_back(h.ref);
    for (TimeNs d : durations) result.total_ns += d;
    const auto [mn, mx] = std::minmax_element(durations.begin(), durations.end());
    result.min_ns = *mn;
    result.max_ns = *mx;
    // Lower median for an even count: a duration that actually occurred.
    const auto mid = durations.begin() + static_cast<long>((durations.size() - 1) / 2);
    std::nth_element(durations.begin(), mid, durations.end());
    result.median_ns = *mid;
    return result;
}

}  // namespace osc::gui

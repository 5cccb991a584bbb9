#include "gui/model/kernel_stats.h"

#include "analyzer/metrics/metric_sum.h"
#include "gui/model/event_details.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace osc::gui {
namespace {

// Kernel name id (or a negative id for copy kinds and memsets) plus launch shape.
using Key = std::tuple<int64_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>;

struct KeyHash {
    size_t operator()(const Key& k) const {
        size_t h = std::hash<int64_t>()(std::get<0>(k));
        const uint32_t parts[] = {std::get<1>(k), std::get<2>(k), std::get<3>(k),
                                  std::get<4>(k), std::get<5>(k), std::get<6>(k)};
        for (uint32_t v : parts) h = h * 1000003u ^ v;
        return h;
    }
};

struct Acc {
    KernelStatsRow row;
    std::vector<TimeNs> durations;
};

}  // namespace

std::vector<KernelStatsRow> kernelStats(const TimelineModel& model, StatsGrouping grouping, const StatsScope& scope,
                                        const std::atomic<bool>* cancel) {
    std::unordered_map<Key, size_t, KeyHash> index;
    std::vector<Acc> acc;
    std::map<int, std::vector<ViewRange>> windows;
    for (const auto& [g, r] : scope.windows) windows[g].push_back(r);
    const bool signature = grouping == StatsGrouping::Signature;
    for (size_t l = 0; l < model.lanes().size(); ++l) {
        const Lane& lane = model.lanes()[l];
        if (lane.kind != LaneKind::Stream) continue;
        if (cancel && cancel->load()) return {};
        std::vector<ViewRange> ranges;
        if (!scope.windows.empty()) {
            const auto it = windows.find(lane.group);
            if (it == windows.end()) continue;
            ranges = it->second;
        } else {
            ranges.push_back({INT64_MIN, INT64_MAX});
        }
        const Device& dev = *model.deviceOf(lane.group);
        const EventRow& row = lane.rows[0];
        for (const ViewRange& w : ranges) {
            const size_t first = w.start == INT64_MIN ? 0 : row.gallopToStart(0, w.start);
            const size_t last = w.end == INT64_MAX ? row.size() : row.gallopToStart(first, w.end);
            for (size_t i = first; i < last; ++i) {
                const uint32_t r = row.ref[i];
                Key key{0, 0, 0, 0, 0, 0, 0};
                switch (row.source[i]) {
                    case EventSource::Kernel: {
                        const KernelTable& K = dev.kernels;
                        const uint32_t id =
                            K.shortName[r] != kNoId && !model.capture().strings.at(K.shortName[r]).empty()
                                ? K.shortName[r]
                                : K.name[r];
                        key = signature
                                  ? Key{id, K.gridX[r], K.gridY[r], K.gridZ[r], K.blockX[r], K.blockY[r], K.blockZ[r]}
                                  : Key{id, 0, 0, 0, 0, 0, 0};
                        break;
                    }
                    case EventSource::Copy:
                        key = Key{-1 - static_cast<int64_t>(dev.copies.copyKind[r]), 0, 0, 0, 0, 0, 0};
                        break;
                    default:
                        key = Key{-100, 0, 0, 0, 0, 0, 0};
                        break;  // memset
                }
                auto [it, fresh] = index.try_emplace(key, acc.size());
                if (fresh) {
                    acc.emplace_back();
                    KernelStatsRow& s = acc.back().row;
                    s.name = eventLabel(model, lane, row, i);
                    s.category = static_cast<Category>(row.category[i]);
                    if (signature && row.source[i] == EventSource::Kernel) {
                        s.grid = {std::get<1>(key), std::get<2>(key), std::get<3>(key)};
                        s.block = {std::get<4>(key), std::get<5>(key), std::get<6>(key)};
                    }
                    s.min = INT64_MAX;
                }
                Acc& a = acc[it->second];
                const TimeNs d = row.end[i] - row.start[i];
                a.durations.push_back(d);
                KernelStatsRow& s = a.row;
                s.total += d;
                s.min = std::min(s.min, d);
                if (!s.longest.valid() || d > s.max) {  // ties keep the first instance
                    s.max = d;
                    s.longest = {static_cast<int>(l), 0, i};
                }
            }
        }
    }
    TimeNs all = 0;
    for (const Acc& a : acc) all += a.row.total;
    std::vector<KernelStatsRow> out;
    out.reserve(acc.size());
    for (Acc& a : acc) {
        if (cancel && cancel->load()) return {};
        KernelStatsRow& s = a.row;
        s.count = a.durations.size();
        s.mean = static_cast<double>(s.total) / static_cast<double>(s.count);
        s.median = lowerMedian(std::move(a.durations));
        s.share = all > 0 ? static_cast<double>(s.total) / static_cast<double>(all) : 0.0;
        out.push_back(std::move(s));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const KernelStatsRow& a, const KernelStatsRow& b) { return a.total > b.total; });
    return out;
}

}  // namespace osc::gui

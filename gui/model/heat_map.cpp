#include "gui/model/heat_map.h"

#include <algorithm>
#include <limits>
#include <thread>

namespace osc::gui {
namespace {

constexpr float kNone = std::numeric_limits<float>::quiet_NaN();

std::vector<int> deviceGroups(const TimelineModel& model) {
    std::vector<int> out;
    for (size_t g = 0; g < model.groups().size(); ++g)
        if (model.groups()[g].device >= 0) out.push_back(static_cast<int>(g));
    return out;  // groups follow processes, which are in rank order
}

float cellValue(TimeNs hidden, TimeNs exposed, TimeNs length, HeatMetric metric) {
    if (metric == HeatMetric::ExposedShare)
        return length > 0 ? static_cast<float>(exposed) / static_cast<float>(length) : 0.f;
    const TimeNs comm = hidden + exposed;
    return comm > 0 ? static_cast<float>(hidden) / static_cast<float>(comm) : kNone;
}

// A step's cell: its overlap ratio as the analysis (and the report) has it.
float stepValue(const OverlapMetrics& m, HeatMetric metric) {
    if (metric == HeatMetric::OverlapRatio) return m.overlap_ratio ? static_cast<float>(*m.overlap_ratio) : kNone;
    return cellValue(m.overlap_ns, m.exposed_comm_ns, m.window_ns, metric);
}

// Adds |set ∩ [edges[c], edges[c+1])| to into[c] for every column c.
void addCoverage(const CoverageIndex& set, const std::vector<TimeNs>& edges, std::vector<TimeNs>& into) {
    const IntervalSet& iv = set.intervals();
    const size_t columns = into.size();
    size_t c = 0;
    for (size_t i = set.firstEndingAfter(edges.front()); i < iv.size() && iv[i].start < edges.back(); ++i) {
        const TimeNs a = std::max(iv[i].start, edges.front()), b = std::min(iv[i].end, edges.back());
        while (c + 1 < columns && edges[c + 1] <= a) ++c;  // intervals are sorted: c only moves on
        for (size_t k = c; k < columns && edges[k] < b; ++k)
            into[k] += std::min(b, edges[k + 1]) - std::max(a, edges[k]);
    }
}

// Largest lateness of device `d`'s arrivals in each step (NaN: none there).
void stepLateness(const RankLateness* lateness, size_t d, float* cells, size_t steps) {
    if (!lateness || d >= lateness->byDevice.size()) return;
    for (const Arrival& a : lateness->byDevice[d])
        if (a.step >= 0 && static_cast<size_t>(a.step) < steps)
            cells[a.step] =
                worstOf(cells[a.step], static_cast<float>(std::max<TimeNs>(0, a.late)), HeatMetric::Lateness);
}

// The largest value of a lateness map, as its full scale (at least 1 ns).
void setLatenessScale(HeatMap& h) {
    float top = 1;
    h.latestRow = -1;
    for (size_t i = 0; i < h.values.size(); ++i)
        if (!std::isnan(h.values[i]) && h.values[i] > top) {
            top = h.values[i];
            h.latestRow = static_cast<int>(i / static_cast<size_t>(std::max(1, h.columns)));
        }
    h.fullScale = top;
}

// One column per step; rows as given (group, device index into the analysis).
HeatMap stepColumns(const Analysis& analysis, const std::vector<std::pair<int, size_t>>& byGroup, HeatMetric metric,
                    const RankLateness* lateness) {
    HeatMap h;
    h.perStep = true;
    std::vector<const DeviceAnalysis*> devices;
    size_t steps = 0;
    for (const auto& [g, i] : byGroup) {
        const DeviceAnalysis* d = &analysis.devices[i];
        h.groups.push_back(g);
        devices.push_back(d);
        if (d->steps.size() > steps) {
            steps = d->steps.size();
            h.stepNames.clear();
            for (const StepAnalysis& s : d->steps) h.stepNames.push_back(s.name);
        }
    }
    h.columns = static_cast<int>(steps);
    h.values.assign(devices.size() * steps, kNone);
    h.cellWindows.assign(devices.size() * steps, ViewRange{0, 0});
    for (size_t r = 0; r < devices.size(); ++r) {
        for (size_t c = 0; c < devices[r]->steps.size(); ++c) {
            const StepAnalysis& s = devices[r]->steps[c];
            if (metric != HeatMetric::Lateness) h.values[r * steps + c] = stepValue(s.metrics, metric);
            h.cellWindows[r * steps + c] = {s.start_ns, s.end_ns};
        }
        if (metric == HeatMetric::Lateness) stepLateness(lateness, byGroup[r].second, &h.values[r * steps], steps);
    }
    if (metric == HeatMetric::Lateness) setLatenessScale(h);
    if (!h.cellWindows.empty()) h.range = {h.cellWindows.front().start, h.cellWindows.back().end};
    return h;
}

// Per column, the largest lateness of the arrivals whose cover
// [start - late, start] (rank_lateness.h) meets it.
void addLateness(const std::vector<Arrival>& arrivals, TimeNs latest, const std::vector<TimeNs>& edges, float* out) {
    const size_t columns = edges.size() - 1;
    auto it = std::lower_bound(arrivals.begin(), arrivals.end(), edges.front(),
                               [](const Arrival& a, TimeNs t) { return a.start < t; });
    for (; it != arrivals.end() && it->start < edges.back() + std::max<TimeNs>(0, latest); ++it) {
        const TimeNs late = std::max<TimeNs>(0, it->late), from = it->start - late;
        if (from >= edges.back()) continue;
        // Columns c with edges[c] <= start and edges[c + 1] > from.
        const size_t first = static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), from) - edges.begin());
        const size_t last =
            static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), it->start) - edges.begin());
        for (size_t c = first > 0 ? first - 1 : 0; c < std::min(last, columns); ++c)
            out[c] = worstOf(out[c], static_cast<float>(late), HeatMetric::Lateness);
    }
}

}  // namespace

ViewRange HeatMap::window(int row, int column) const {
    if (perStep)
        return cellWindows[static_cast<size_t>(row) * static_cast<size_t>(columns) + static_cast<size_t>(column)];
    const TimeScale s(range, columns);
    return {s.toTime(column), s.toTime(column + 1.0)};
}

void parallelRows(int rows, const std::function<void(int)>& fn) {
    const int threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 8);
    if (threads == 1 || rows < 16) {
        for (int r = 0; r < rows; ++r) fn(r);
        return;
    }
    // Contiguous blocks: each thread writes its own part of the output.
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int r = rows * t / threads; r < rows * (t + 1) / threads; ++r) fn(r);
        });
    for (auto& th : pool) th.join();
}

float worstOf(float a, float b, HeatMetric metric) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    return metric == HeatMetric::OverlapRatio ? std::min(a, b) : std::max(a, b);
}

std::vector<float> columnMedians(const HeatMap& h) {
    constexpr int kBins = 256;
    std::vector<float> out(static_cast<size_t>(std::max(0, h.columns)), kNone);
    const int rows = h.rows();
    const float scale = h.fullScale > 0 ? h.fullScale : 1;
    // Blocks of columns per thread, each reading its block of every row (rows are contiguous).
    constexpr int kBlock = 64;
    const int blocks = (h.columns + kBlock - 1) / kBlock;
    parallelRows(blocks, [&](int b) {
        const int c0 = b * kBlock, c1 = std::min(h.columns, c0 + kBlock);
        std::vector<int> hist(static_cast<size_t>(c1 - c0) * kBins, 0);
        std::vector<int> counted(static_cast<size_t>(c1 - c0), 0);
        for (int r = 0; r < rows; ++r)
            for (int c = c0; c < c1; ++c) {
                const float v = h.at(r, c);
                if (std::isnan(v)) continue;
                const int bin = std::clamp(static_cast<int>(v / scale * (kBins - 1) + 0.5f), 0, kBins - 1);
                ++hist[static_cast<size_t>(c - c0) * kBins + static_cast<size_t>(bin)];
                ++counted[static_cast<size_t>(c - c0)];
            }
        for (int c = c0; c < c1; ++c) {
            const int n = counted[static_cast<size_t>(c - c0)];
            if (n == 0) continue;
            // The lower median, as the analyzer takes medians.
            int seen = 0, bin = 0;
            for (; bin < kBins; ++bin) {
                seen += hist[static_cast<size_t>(c - c0) * kBins + static_cast<size_t>(bin)];
                if (seen >= (n + 1) / 2) break;
            }
            out[static_cast<size_t>(c)] = static_cast<float>(bin) / (kBins - 1) * scale;
        }
    });
    return out;
}

int shownRow(const HeatMap& h, int r0, int r1, int column, float median, HeatMetric metric) {
    int best = -1;
    float bestValue = kNone;
    for (int r = r0; r < r1; ++r) {
        const float v = h.at(r, column);
        if (std::isnan(v)) continue;
        if (best < 0) {
            best = r, bestValue = v;
            continue;
        }
        if (metric == HeatMetric::Lateness || std::isnan(median)) {
            if (worstOf(bestValue, v, metric) != bestValue) best = r, bestValue = v;
            continue;
        }
        const float d = std::abs(v - median), bestD = std::abs(bestValue - median);
        if (d > bestD || (d == bestD && worstOf(bestValue, v, metric) != bestValue)) best = r, bestValue = v;
    }
    return best < 0 ? r0 : best;
}

HeatMap heatMapByTime(const TimelineModel& model, ViewRange range, int columns, HeatMetric metric,
                      const RankLateness* lateness) {
    HeatMap h;
    heatMapByTime(model, range, columns, metric, h, lateness);
    return h;
}

void heatMapByTime(const TimelineModel& model, ViewRange range, int columns, HeatMetric metric, HeatMap& h,
                   const RankLateness* lateness) {
    h.groups = deviceGroups(model);
    h.range = range;
    h.fullScale = 1;
    h.latestRow = -1;
    h.perStep = false;
    h.stepNames.clear();
    h.cellWindows.clear();
    h.columns = std::max(0, columns);
    h.values.assign(h.groups.size() * static_cast<size_t>(h.columns), kNone);
    if (h.columns == 0 || range.length() <= 0) return;
    const TimeScale scale(range, h.columns);
    // Bucket edges once, shared by every row.
    std::vector<TimeNs> edges(static_cast<size_t>(h.columns) + 1);
    for (int c = 0; c <= h.columns; ++c) edges[static_cast<size_t>(c)] = scale.toTime(c);
    if (metric == HeatMetric::Lateness) {
        parallelRows(h.rows(), [&](int r) {
            const DeviceGroup& g = model.groups()[static_cast<size_t>(h.groups[static_cast<size_t>(r)])];
            if (!lateness || g.analysisDevice < 0 || static_cast<size_t>(g.analysisDevice) >= lateness->byDevice.size())
                return;
            const auto d = static_cast<size_t>(g.analysisDevice);
            addLateness(lateness->byDevice[d], lateness->latestOf[d], edges,
                        &h.values[static_cast<size_t>(r) * static_cast<size_t>(h.columns)]);
        });
        setLatenessScale(h);
        return;
    }
    parallelRows(h.rows(), [&](int r) {
        const DeviceGroup& g = model.groups()[static_cast<size_t>(h.groups[static_cast<size_t>(r)])];
        // One sweep over the intervals in view, adding each to the columns it
        // touches: work follows intervals plus columns, not columns x log n.
        thread_local std::vector<TimeNs> hidden, exposed;
        hidden.assign(static_cast<size_t>(h.columns), 0);
        exposed.assign(static_cast<size_t>(h.columns), 0);
        addCoverage(g.coverage.overlap, edges, hidden);
        addCoverage(g.coverage.exposedComm, edges, exposed);
        float* out = &h.values[static_cast<size_t>(r) * static_cast<size_t>(h.columns)];
        for (int c = 0; c < h.columns; ++c) {
            const auto k = static_cast<size_t>(c);
            out[c] = cellValue(hidden[k], exposed[k], edges[k + 1] - edges[k], metric);
        }
    });
}

HeatMap heatMapBySteps(const TimelineModel& model, const Analysis& analysis, HeatMetric metric,
                       const RankLateness* lateness) {
    // Rows: the analysed devices that have a group, in group order.
    std::vector<std::pair<int, size_t>> byGroup;
    for (size_t i = 0; i < analysis.devices.size(); ++i)
        if (const int g = model.groupOf(analysis.devices[i]); g >= 0) byGroup.emplace_back(g, i);
    std::sort(byGroup.begin(), byGroup.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return stepColumns(analysis, byGroup, metric, lateness);
}

HeatMap heatMapBySteps(const Analysis& analysis, HeatMetric metric, const RankLateness* lateness) {
    std::vector<std::pair<int, size_t>> rows;
    for (size_t i = 0; i < analysis.devices.size(); ++i) rows.emplace_back(-1, i);
    HeatMap h = stepColumns(analysis, rows, metric, lateness);
    for (const DeviceAnalysis& d : analysis.devices)
        h.rowLabels.push_back((d.rank >= 0 ? "rank " + std::to_string(d.rank) : d.host + ":" + std::to_string(d.pid)) +
                              " · GPU " + std::to_string(d.device));
    return h;
}

}  // namespace osc::gui

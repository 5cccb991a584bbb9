#include "analyzer/metrics/steps.h"

#include "analyzer/metrics/classify.h"

#include <algorithm>

namespace osc {

void CorrelationMap::build(const std::vector<uint32_t>& ids, const std::vector<int32_t>& values) {
    flat_.clear();
    sorted_.clear();
    base_ = 0;
    size_t n = 0;
    uint32_t minId = UINT32_MAX, maxId = 0;
    for (size_t i = 0; i < ids.size(); ++i)
        if (values[i] >= 0 && ids[i] != 0 && ids[i] != kNoId) {
            ++n;
            minId = std::min(minId, ids[i]);
            maxId = std::max(maxId, ids[i]);
        }
    if (n == 0) return;
    // CUPTI hands out correlation ids from a counter, so they are usually
    // dense: a flat table answers in one load. Sparse ids fall back to search.
    if (maxId - minId <= 4 * n + (1u << 20)) {
        base_ = minId;
        flat_.assign(static_cast<size_t>(maxId - minId) + 1, -1);
        for (size_t i = 0; i < ids.size(); ++i)
            if (values[i] >= 0 && ids[i] != 0 && ids[i] != kNoId) flat_[ids[i] - minId] = values[i];
        return;
    }
    sorted_.reserve(n);
    for (size_t i = 0; i < ids.size(); ++i)
        if (values[i] >= 0 && ids[i] != 0 && ids[i] != kNoId) sorted_.emplace_back(ids[i], values[i]);
    std::sort(sorted_.begin(), sorted_.end());
}

int32_t CorrelationMap::findSorted(uint32_t id) const {
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::make_pair(id, INT32_MIN));
    return it != sorted_.end() && it->first == id ? it->second : -1;
}

StepProjector::StepProjector(const Capture& capture, const Process& process, const std::regex& pattern,
                             std::vector<int8_t>& matches) {
    const RangeTable& r = process.ranges;
    const auto isStep = [&](size_t i) {
        if (r.end[i] <= r.start[i]) return false;  // marks and broken ranges
        if (i < r.kind.size() && r.kind[i] == RangeKind::Mark) return false;
        const uint32_t id = r.name[i];
        if (id == kNoId) return false;
        if (id >= matches.size()) matches.resize(std::max<size_t>(capture.strings.size(), id + 1), -1);
        if (matches[id] < 0) {
            matches[id] = searchName(capture.strings.at(id), pattern) ? 1 : 0;
        }
        return matches[id] == 1;
    };
    const auto gpuSide = [&](size_t i) { return i < r.onGpu.size() && r.onGpu[i] != 0; };

    std::vector<size_t> cpu, gpu;
    for (size_t i = 0; i < r.size(); ++i)
        if (isStep(i)) (gpuSide(i) ? gpu : cpu).push_back(i);

    if (cpu.empty()) {
        onGpu_ = true;
        // Merge same-named GPU annotations that overlap: one per stream in Kineto.
        for (size_t i : gpu) {
            const Interval iv{r.start[i], r.end[i]};
            const std::string nm(capture.strings.at(r.name[i]));
            bool merged = false;
            for (size_t s = ranges_.size(); s-- > 0;) {
                if (ranges_[s].end < iv.start) continue;
                if (names_[s] == nm) {
                    ranges_[s].end = std::max(ranges_[s].end, iv.end);
                    merged = true;
                    break;
                }
            }
            if (!merged) {
                ranges_.push_back(iv);
                names_.push_back(nm);
            }
        }
        return;
    }

    const ApiCallTable& api = process.apiCalls;
    std::vector<int32_t> owner(api.size(), -1);
    const bool apiSorted = std::is_sorted(api.start.begin(), api.start.end());
    for (size_t s = 0; s < cpu.size(); ++s) {
        const size_t i = cpu[s];
        ranges_.push_back({r.start[i], r.end[i]});
        names_.emplace_back(capture.strings.at(r.name[i]));
        const uint64_t tid = i < r.globalTid.size() ? r.globalTid[i] : 0;
        const auto claim = [&](size_t j) {
            if (api.start[j] < r.start[i] || api.start[j] >= r.end[i]) return;
            const int32_t prev = owner[j];
            const uint64_t apiTid = j < api.globalTid.size() ? api.globalTid[j] : 0;
            if (prev < 0) {
                owner[j] = static_cast<int32_t>(s);
            } else if (tid != 0 && tid == apiTid) {
                const size_t pi = cpu[static_cast<size_t>(prev)];
                const uint64_t prevTid = pi < r.globalTid.size() ? r.globalTid[pi] : 0;
                if (prevTid != apiTid) owner[j] = static_cast<int32_t>(s);
            }
        };
        if (apiSorted) {
            auto lo = std::lower_bound(api.start.begin(), api.start.end(), r.start[i]);
            auto hi = std::lower_bound(lo, api.start.end(), r.end[i]);
            for (auto j = lo; j != hi; ++j) claim(static_cast<size_t>(j - api.start.begin()));
        } else {
            for (size_t j = 0; j < api.size(); ++j) claim(j);
        }
    }
    byCorrelation_.build(api.correlation, owner);
}

std::vector<Interval> StepProjector::gpuWindows(const Device& device, const DeviceCoverage& coverage) const {
    std::vector<Interval> w(ranges_.size());
    if (onGpu_) {
        for (size_t s = 0; s < ranges_.size(); ++s)
            if (coverage.busy.covered(ranges_[s]) > 0) w[s] = ranges_[s];
        return w;
    }
    std::vector<bool> seen(ranges_.size(), false);
    const auto take = [&](const std::vector<uint32_t>& corr, const std::vector<TimeNs>& start,
                          const std::vector<TimeNs>& end) {
        for (size_t i = 0; i < start.size(); ++i) {
            if (end[i] <= start[i]) continue;
            const int32_t s = i < corr.size() ? stepOfCorrelation(corr[i]) : -1;
            if (s < 0) continue;
            Interval& x = w[static_cast<size_t>(s)];
            if (!seen[static_cast<size_t>(s)]) {
                x = {start[i], end[i]};
                seen[static_cast<size_t>(s)] = true;
            } else {
                x.start = std::min(x.start, start[i]);
                x.end = std::max(x.end, end[i]);
            }
        }
    };
    take(device.kernels.correlation, device.kernels.start, device.kernels.end);
    take(device.copies.correlation, device.copies.start, device.copies.end);
    take(device.memsets.correlation, device.memsets.start, device.memsets.end);
    return w;
}

}  // namespace osc

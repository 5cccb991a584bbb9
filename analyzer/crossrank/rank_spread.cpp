#include "analyzer/crossrank/rank_spread.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace osc::crossrank {
namespace {

template <typename T>
T medianOf(std::vector<T> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : static_cast<T>((v[n / 2 - 1] + v[n / 2]) / 2);
}

}  // namespace

std::optional<RankSpread> rankSpread(const std::vector<SpreadDevice>& devices) {
    if (devices.size() < 2) return std::nullopt;
    std::set<std::string_view> common;
    for (size_t d = 0; d < devices.size(); ++d) {
        std::set<std::string_view> names;
        for (const auto& s : devices[d].steps) names.insert(s.name);
        if (d == 0) {
            common = std::move(names);
        } else {
            std::set<std::string_view> both;
            std::set_intersection(common.begin(), common.end(), names.begin(), names.end(),
                                  std::inserter(both, both.begin()));
            common = std::move(both);
        }
    }
    RankSpread r;
    std::vector<TimeNs> times;
    std::vector<double> ratios;
    for (const auto& dev : devices) {
        TimeNs window = 0, overlap = 0, comm = 0;
        int n = 0;
        for (const auto& s : dev.steps) {
            if (!common.count(s.name)) continue;
            window += s.window_ns;
            overlap += s.overlap_ns;
            comm += s.comm_ns;
            ++n;
        }
        if (n == 0) {  // no common steps: overlap over the whole span
            overlap = dev.overlap_ns;
            comm = dev.comm_ns;
        } else {
            times.push_back(window / n);
        }
        if (comm > 0) ratios.push_back(static_cast<double>(overlap) / static_cast<double>(comm));
    }
    if (!times.empty()) {
        r.step_time_min_ns = *std::min_element(times.begin(), times.end());
        r.step_time_max_ns = *std::max_element(times.begin(), times.end());
        r.step_time_median_ns = medianOf(times);
    }
    if (!ratios.empty()) {
        r.overlap_ratio_min = *std::min_element(ratios.begin(), ratios.end());
        r.overlap_ratio_max = *std::max_element(ratios.begin(), ratios.end());
        r.overlap_ratio_median = medianOf(ratios);
    }
    return r;
}

}  // namespace osc::crossrank

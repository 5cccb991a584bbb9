// Measuring against something in the same run: several sides (this build,
// an earlier binary, a limit) run round by round, in an order that turns
// each round (ABBA for two), so a machine that slows down or speeds up
// during the run weighs on every side alike. A side's figure is the median of
// its runs; a comparison is the median of the per-round ratios, with the sign
// test's distribution-free 95 % interval where there are rounds enough.
#pragma once

#include "bench/child_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace osc::bench {

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The sign test's 95 % interval for the median of n values: the k-th
// smallest and the k-th largest, k the largest rank whose tail
// P(Binomial(n, 1/2) < k) stays within 2.5 %. Exact for any distribution.
inline std::pair<double, double> medianInterval(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const int n = static_cast<int>(v.size());
    if (n == 0) return {0, 0};
    double tail = 0, term = std::pow(0.5, n);  // P(B = 0)
    int k = 0;
    while (k < n / 2 && tail + term <= 0.025) {
        tail += term;
        term = term * (n - k) / (k + 1);
        ++k;
    }
    if (k == 0) return {v.front(), v.back()};  // too few rounds for 95 %: the whole range
    return {v[k - 1], v[n - k]};
}

// The 1-minute load average: how busy the machine was.
inline double loadAverage() {
    double one = 0;
    std::ifstream("/proc/loadavg") >> one;
    return one;
}

struct Side {
    std::string name;
    std::function<ChildRun()> run;
};

class PairedRuns {
public:
    // Runs every side `rounds` times, turning the order each round.
    PairedRuns(std::vector<Side> sides, int rounds) : sides_(std::move(sides)), runs_(sides_.size()) {
        loadBefore_ = loadAverage();
        const size_t n = sides_.size();
        for (int r = 0; r < std::max(1, rounds); ++r)
            for (size_t i = 0; i < n; ++i) {
                // ABBA for two sides, ABC CAB BCA ... for more.
                const size_t side = n == 2 ? (r % 2 == 0 ? i : 1 - i) : (i + static_cast<size_t>(r)) % n;
                runs_[side].push_back(sides_[side].run());
            }
        loadAfter_ = loadAverage();
    }

    size_t sides() const { return sides_.size(); }
    const std::string& name(size_t side) const { return sides_[side].name; }
    const std::vector<ChildRun>& runs(size_t side) const { return runs_[side]; }
    bool ok(size_t side) const {
        return std::all_of(runs_[side].begin(), runs_[side].end(), [](const ChildRun& r) { return r.ok; });
    }
    double median(size_t side, double ChildRun::*field) const {
        std::vector<double> v;
        for (const auto& r : runs_[side]) v.push_back(r.*field);
        return bench::median(v);
    }
    // Per-round a / b of `field`: their median and its 95 % interval.
    struct Ratio {
        double median = 0, low = 0, high = 0;
    };
    Ratio ratio(size_t a, size_t b, double ChildRun::*field) const {
        std::vector<double> v;
        for (size_t r = 0; r < runs_[a].size() && r < runs_[b].size(); ++r)
            if (runs_[b][r].*field > 0) v.push_back(runs_[a][r].*field / (runs_[b][r].*field));
        const auto [lo, hi] = medianInterval(v);
        return {bench::median(v), lo, hi};
    }
    double loadBefore() const { return loadBefore_; }
    double loadAfter() const { return loadAfter_; }

private:
    std::vector<Side> sides_;
    std::vector<std::vector<ChildRun>> runs_;
    double loadBefore_ = 0, loadAfter_ = 0;
};

}  // namespace osc::bench

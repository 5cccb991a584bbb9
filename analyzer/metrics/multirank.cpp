#include "analyzer/metrics/multirank.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <tuple>

namespace osc {
namespace {

struct Keyed {
    // (scheme, commHash, collective, sequence): scheme 0 = plugin identity, 1 = order.
    std::tuple<int, uint64_t, std::string, uint64_t> key;
    int device, op;
};

template <typename T>
T medianOf(std::vector<T> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : static_cast<T>((v[n / 2 - 1] + v[n / 2]) / 2);
}

}  // namespace

void matchAcrossDevices(Analysis& a) {
    a.matched.clear();
    a.total_skew_ns = 0;
    if (a.devices.size() < 2) return;
    std::vector<Keyed> all;
    for (size_t d = 0; d < a.devices.size(); ++d) {
        std::map<std::string, uint64_t> ordinal;
        const auto& ops = a.devices[d].collectives;
        for (size_t i = 0; i < ops.size(); ++i) {
            const auto& op = ops[i];
            // Sends and receives pair by peer, not by order (p2p.h).
            if (op.collective.empty() || op.collective == "SendRecv") continue;
            Keyed k{{}, static_cast<int>(d), static_cast<int>(i)};
            if (op.commHash && op.seqNumber)
                k.key = {0, *op.commHash, op.collective, *op.seqNumber};
            else
                k.key = {1, 0, op.collective, ordinal[op.collective]++};
            all.push_back(std::move(k));
        }
    }
    std::sort(all.begin(), all.end(), [](const Keyed& x, const Keyed& y) {
        return std::tie(x.key, x.device, x.op) < std::tie(y.key, y.device, y.op);
    });
    for (size_t g = 0; g < all.size();) {
        size_t e = g;
        while (e < all.size() && all[e].key == all[g].key) ++e;
        MatchedCollective m;
        m.collective = std::get<2>(all[g].key);
        if (std::get<0>(all[g].key) == 0) {
            m.commHash = std::get<1>(all[g].key);
            m.seqNumber = std::get<3>(all[g].key);
        }
        for (size_t i = g; i < e; ++i) {
            if (!m.instances.empty() && m.instances.back().first == all[i].device) continue;
            m.instances.emplace_back(all[i].device, all[i].op);
        }
        g = e;
        if (m.instances.size() >= 2) appendMatched(a, std::move(m));
    }
    sortMatchedByFirstStart(a);
}

void appendMatched(Analysis& a, MatchedCollective m) {
    TimeNs firstStart = INT64_MAX, lastStart = INT64_MIN, firstEnd = INT64_MAX;
    for (const auto& [d, i] : m.instances) {
        const auto& op = a.devices[static_cast<size_t>(d)].collectives[static_cast<size_t>(i)];
        firstStart = std::min(firstStart, op.start_ns);
        lastStart = std::max(lastStart, op.start_ns);
        firstEnd = std::min(firstEnd, op.end_ns);
    }
    m.skew_ns = lastStart - firstStart;
    m.transfer_ns = std::max<TimeNs>(0, firstEnd - lastStart);
    a.total_skew_ns += m.skew_ns;
    a.matched.push_back(std::move(m));
}

void sortMatchedByFirstStart(Analysis& a) {
    const auto firstStartOf = [&](const MatchedCollective& m) {
        TimeNs t = INT64_MAX;
        for (auto [d, i] : m.instances)
            t = std::min(t, a.devices[static_cast<size_t>(d)].collectives[static_cast<size_t>(i)].start_ns);
        return t;
    };
    std::stable_sort(a.matched.begin(), a.matched.end(),
                     [&](const MatchedCollective& x, const MatchedCollective& y) {
                         return firstStartOf(x) < firstStartOf(y);
                     });
}

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

std::optional<RankSpread> rankSpread(const Analysis& a) {
    std::vector<SpreadDevice> devices(a.devices.size());
    for (size_t d = 0; d < a.devices.size(); ++d) {
        const auto& dev = a.devices[d];
        devices[d].overlap_ns = dev.totals.overlap_ns;
        devices[d].comm_ns = dev.totals.comm_ns;
        for (const auto& s : dev.steps)
            devices[d].steps.push_back({s.name, s.metrics.window_ns, s.metrics.overlap_ns, s.metrics.comm_ns});
    }
    return rankSpread(devices);
}

}  // namespace osc

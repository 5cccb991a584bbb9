#include "analyzer/metrics/microbatches.h"

#include "analyzer/metrics/classify.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

namespace osc {

std::regex compileMicrobatchPattern(const std::string& pattern) {
    std::regex re;
    try {
        re = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw std::invalid_argument("invalid --microbatch-pattern pattern '" + pattern + "': " + e.what());
    }
    if (re.mark_count() < 2)
        throw std::invalid_argument("invalid --microbatch-pattern pattern '" + pattern +
                                    "': it needs two groups, the phase (fwd/bwd) and the micro-batch number");
    return re;
}

MicroBatchRanges::MicroBatchRanges(const Capture& capture, const Process& process, const std::regex& pattern,
                                   std::vector<int8_t>& matches)
    : projector_(capture, process, pattern, matches) {
    if (projector_.size() == 0) return;
    forward_.assign(projector_.size(), -1);
    number_.assign(projector_.size(), -1);
    // Names repeat (every step has `fwd mb 0`): parse each distinct one once.
    std::map<std::string, std::pair<int8_t, int64_t>> parsed;
    for (size_t r = 0; r < projector_.size(); ++r) {
        const std::string& name = projector_.name(r);
        auto it = parsed.find(name);
        if (it == parsed.end()) {
            std::pair<int8_t, int64_t> v{-1, -1};
            const std::string bounded = name.substr(0, kRegexNameLimit);
            std::smatch m;
            if (std::regex_search(bounded, m, pattern) && m[1].matched && m[2].matched) {
                const std::string phase = m[1].str(), digits = m[2].str();
                int64_t n = -1;
                const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
                const char c = phase.empty() ? '\0' : static_cast<char>(phase[0] | 0x20);
                if (ec == std::errc() && end == digits.data() + digits.size() && (c == 'f' || c == 'b'))
                    v = {static_cast<int8_t>(c == 'f'), n};
            }
            it = parsed.emplace(name, v).first;
        }
        forward_[r] = it->second.first;
        number_[r] = it->second.second;
    }
}

std::vector<DeviceIntervals::MicroBatches> MicroBatchRanges::onDevice(const Device& device,
                                                                      ActivityClassifier& classifier,
                                                                      const std::vector<StepAnalysis>& steps) const {
    std::vector<DeviceIntervals::MicroBatches> out;
    if (empty()) return out;
    const size_t n = projector_.size();
    std::vector<Interval> compute(n);
    std::vector<char> seen(n, 0);
    const auto add = [&](size_t r, TimeNs s, TimeNs e) {
        if (forward_[r] < 0) return;
        if (!seen[r]) {
            compute[r] = {s, e};
            seen[r] = 1;
        } else {
            compute[r].start = std::min(compute[r].start, s);
            compute[r].end = std::max(compute[r].end, e);
        }
    };
    const auto& k = device.kernels;
    std::vector<size_t> byStart;
    if (projector_.onGpu()) {
        byStart.resize(n);
        std::iota(byStart.begin(), byStart.end(), size_t{0});
        std::sort(byStart.begin(), byStart.end(),
                  [&](size_t x, size_t y) { return projector_.range(x).start < projector_.range(y).start; });
    }
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.end[i] <= k.start[i]) continue;
        if (classifier.kernel(kernelNameId(k, i)) != Category::Compute) continue;
        if (!projector_.onGpu()) {
            const int32_t r = i < k.correlation.size() ? projector_.stepOfCorrelation(k.correlation[i]) : -1;
            if (r >= 0) add(static_cast<size_t>(r), k.start[i], k.end[i]);
            continue;
        }
        // The latest-starting range at or before the kernel that still holds it.
        auto it = std::upper_bound(byStart.begin(), byStart.end(), k.start[i],
                                   [&](TimeNs t, size_t r) { return t < projector_.range(r).start; });
        for (int walked = 0; it != byStart.begin() && walked < 8; ++walked) {
            --it;
            if (k.start[i] < projector_.range(*it).end) {
                add(*it, k.start[i], k.end[i]);
                break;
            }
        }
    }

    // The device step holding each range's first compute kernel.
    std::vector<size_t> stepOrder(steps.size());
    std::iota(stepOrder.begin(), stepOrder.end(), size_t{0});
    std::sort(stepOrder.begin(), stepOrder.end(),
              [&](size_t x, size_t y) { return steps[x].start_ns < steps[y].start_ns; });
    const auto stepOf = [&](TimeNs t) {
        auto it = std::upper_bound(stepOrder.begin(), stepOrder.end(), t,
                                   [&](TimeNs v, size_t s) { return v < steps[s].start_ns; });
        for (int walked = 0; it != stepOrder.begin() && walked < 8; ++walked) {
            --it;
            if (t < steps[*it].end_ns) return static_cast<int>(*it);
        }
        return -1;
    };
    struct Acc {
        std::set<int64_t> forward, backward;
        Interval compute;
    };
    std::map<int, Acc> perStep;
    for (size_t r = 0; r < n; ++r) {
        if (!seen[r]) continue;
        const int s = stepOf(compute[r].start);
        auto [it, fresh] = perStep.try_emplace(s);
        Acc& acc = it->second;
        (forward_[r] ? acc.forward : acc.backward).insert(number_[r]);
        if (fresh) {
            acc.compute = compute[r];
        } else {
            acc.compute.start = std::min(acc.compute.start, compute[r].start);
            acc.compute.end = std::max(acc.compute.end, compute[r].end);
        }
    }
    for (const auto& [s, acc] : perStep)
        out.push_back({s, static_cast<int>(acc.forward.size()), static_cast<int>(acc.backward.size()), acc.compute});
    return out;
}

}  // namespace osc

#include "gui/model/step_patterns.h"

#include "analyzer/metrics/step_keys.h"
#include "gui/model/kernel_links.h"
#include "gui/model/time_ticks.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace osc::gui {
namespace {

std::string times(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f×", v);
    return buf;
}

}  // namespace

std::vector<std::vector<int>> allToAllStepIndex(const Analysis& a) {
    const size_t n = a.devices.size();
    std::vector<std::vector<int>> out(n);
    std::vector<std::vector<StepKey>> keys(n);
    for (size_t d = 0; d < n; ++d) {
        keys[d] = stepKeys(a.devices[d]);
        out[d].assign(keys[d].size(), -1);
    }
    // The analyzer files each all-to-all step under the step key (name,
    // occurrence) of its exchanges; a rank's row of it is its step of that
    // key, when the rank took part.
    std::map<StepKey, int> indexOf;
    for (size_t k = 0; k < a.alltoall.size(); ++k) {
        const StepKey key{a.alltoall[k].step, a.alltoall[k].occurrence};
        if (key != kOutsideSteps) indexOf.emplace(key, static_cast<int>(k));
    }
    for (size_t d = 0; d < n; ++d)
        for (size_t s = 0; s < keys[d].size(); ++s) {
            const auto it = indexOf.find(keys[d][s]);
            if (it == indexOf.end()) continue;
            const auto& ranks = a.alltoall[static_cast<size_t>(it->second)].ranks;
            if (std::any_of(ranks.begin(), ranks.end(),
                            [&](const AllToAllRank& r) { return r.device == static_cast<int>(d); }))
                out[d][s] = it->second;
        }
    return out;
}

std::string bubbleShareText(const PipelineStageMetrics& m) {
    if (!m.bubble_share) return "–";
    std::string text = formatPercent(*m.bubble_share);
    if (m.theoretical_bubble_share) text += " (" + formatPercent(*m.theoretical_bubble_share) + ")";
    return text;
}

std::string bubbleDetails(const PipelineStageMetrics& m) {
    std::string text = formatDuration(m.bubble_ns, 4) + " of the " + formatDuration(m.window_ns, 4) +
                       " pipeline window" + (m.bubble_share ? " = " + formatPercent(*m.bubble_share) : std::string());
    if (m.theoretical_bubble_share) {
        text += "; theory ";
        if (m.stages > 0)
            text += "(S−1)/(M+S−1) = " + std::to_string(m.stages - 1) + "/" +
                    std::to_string(m.microbatches + m.stages - 1) + " = ";
        text += formatPercent(*m.theoretical_bubble_share);
    }
    text += "; fill " + formatDuration(m.fill_ns, 4) + ", drain " + formatDuration(m.drain_ns, 4) + ", stall " +
            formatDuration(m.stall_ns, 4);
    return text;
}

std::string stageText(const PipelineStageMetrics& m) {
    return "stage " + std::to_string(m.stage) + " of " + std::to_string(m.stages) + ", " +
           std::to_string(m.microbatches) + " micro-batches" + (m.slowest ? " (the slowest stage)" : "");
}

std::optional<double> allToAllImbalance(const AllToAllStep& s) {
    return s.bytes_imbalance ? s.bytes_imbalance : s.time_imbalance;
}

bool allToAllImbalanced(const Analysis& a, const AllToAllStep& s) {
    const auto v = allToAllImbalance(s);
    return v && *v >= a.settings.alltoallImbalance;
}

std::string imbalanceText(const AllToAllStep& s) {
    if (s.bytes_imbalance) return times(*s.bytes_imbalance) + " bytes";
    if (s.time_imbalance) return times(*s.time_imbalance) + " time";
    return {};
}

std::string imbalanceDetails(const Analysis& a, const AllToAllStep& s) {
    std::string text;
    if (s.bytes_imbalance) text += "bytes max/mean " + times(*s.bytes_imbalance);
    if (s.time_imbalance)
        text += std::string(text.empty() ? "" : ", ") + "transfer time max/mean " + times(*s.time_imbalance);
    if (text.empty()) text = "unknown (no bytes and no transfer time)";
    const auto value = allToAllImbalance(s);
    if (value && *value < 1.0005) {
        text += "; balanced: every rank moves as much";
    } else if (s.overloaded >= 0 && static_cast<size_t>(s.overloaded) < a.devices.size()) {
        const auto it = std::find_if(s.ranks.begin(), s.ranks.end(),
                                     [&](const AllToAllRank& r) { return r.device == s.overloaded; });
        text += "; most: " + deviceLabel(a.devices[static_cast<size_t>(s.overloaded)]);
        if (it != s.ranks.end() && it->bytes && s.bytes_imbalance && *s.bytes_imbalance > 0)
            text += " (" + formatBytes(*it->bytes) + " sent and received, mean " +
                    formatBytes(static_cast<uint64_t>(static_cast<double>(*it->bytes) / *s.bytes_imbalance)) + ")";
    }
    text += "; " + std::to_string(s.ranks.size()) + " ranks, " + std::to_string(s.dispatches) + " exchange(s)";
    if (allToAllImbalanced(a, s)) text += "; at or above the finding threshold " + times(a.settings.alltoallImbalance);
    return text;
}

std::string allToAllText(const AllToAllMetrics& m) {
    std::string text = std::to_string(m.ops) + " operation(s), " + formatDuration(m.alltoall_ns, 4) + " (exposed " +
                       formatDuration(m.exposed_alltoall_ns, 4) + ", transfer after the last arrival " +
                       formatDuration(m.transfer_ns, 4) + ")";
    if (m.bytes_sent) text += ", sent " + formatBytes(*m.bytes_sent);
    if (m.bytes_received) text += ", received " + formatBytes(*m.bytes_received);
    return text;
}

}  // namespace osc::gui

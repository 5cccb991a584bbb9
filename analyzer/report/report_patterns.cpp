#include "analyzer/report/report_patterns.h"

#include "analyzer/report/report_format.h"

#include <algorithm>
#include <map>
#include <set>

namespace osc::report {

std::optional<PipelineStageMetrics> pipelineSummary(const Analysis& a) { return pipelineSummary(a.devices); }

std::optional<PipelineStageMetrics> pipelineSummary(const std::vector<DeviceAnalysis>& devices) {
    std::optional<PipelineStageMetrics> out;
    double expected = 0;
    for (const auto& d : devices) {
        if (!d.pipeline) continue;
        if (!out) out = PipelineStageMetrics{};
        const auto& m = *d.pipeline;
        out->window_ns += m.window_ns;
        out->compute_ns += m.compute_ns;
        out->bubble_ns += m.bubble_ns;
        out->fill_ns += m.fill_ns;
        out->drain_ns += m.drain_ns;
        out->stall_ns += m.stall_ns;
        out->stages = std::max(out->stages, m.stages);
        out->microbatches = std::max(out->microbatches, m.microbatches);
        expected += m.theoretical_bubble_share.value_or(0) * static_cast<double>(m.window_ns);
    }
    if (out && out->window_ns > 0) {
        out->bubble_share = static_cast<double>(out->bubble_ns) / static_cast<double>(out->window_ns);
        out->theoretical_bubble_share = expected / static_cast<double>(out->window_ns);
    }
    return out;
}

std::optional<double> alltoallImbalance(const AllToAllStep& s) {
    return s.bytes_imbalance ? s.bytes_imbalance : s.time_imbalance;
}

const AllToAllStep* worstAllToAll(const Analysis& a, double* value) { return worstAllToAll(a.alltoall, value); }

const AllToAllStep* worstAllToAll(const std::vector<AllToAllStep>& alltoall, double* value) {
    const AllToAllStep* worst = nullptr;
    double best = 0;
    for (const auto& s : alltoall) {
        const auto v = alltoallImbalance(s);
        if (v && (!worst || *v > best)) {
            worst = &s;
            best = *v;
        }
    }
    if (value) *value = best;
    return worst;
}

std::optional<TimeNs> exposedAllToAll(const Analysis& a) { return exposedAllToAll(a.devices); }

std::optional<TimeNs> exposedAllToAll(const std::vector<DeviceAnalysis>& devices) {
    std::optional<TimeNs> out;
    for (const auto& d : devices)
        if (d.alltoall) out = out.value_or(0) + d.alltoall->exposed_alltoall_ns;
    return out;
}

std::string deviceName(const Analysis& a, int device) { return deviceName(a.devices, device); }

std::string deviceName(const std::vector<DeviceAnalysis>& devices, int device) {
    if (device < 0 || static_cast<size_t>(device) >= devices.size()) return "device " + std::to_string(device);
    return deviceLabel(devices[static_cast<size_t>(device)]);
}

namespace {

std::string stepLabel(const std::string& step) { return step.empty() ? "(outside steps)" : step; }

// How often each device was the slowest stage (pipeline) or overloaded (all-to-all).
template <typename Steps, typename Pick>
std::pair<int, int> mostOften(const Steps& steps, Pick pick) {
    std::map<int, int> count;
    for (const auto& s : steps)
        if (pick(s) >= 0) ++count[pick(s)];
    std::pair<int, int> best{-1, 0};
    for (const auto& [d, n] : count)
        if (n > best.second) best = {d, n};
    return best;
}

}  // namespace

std::vector<std::string> pipelineLines(const std::vector<PipelineStep>& pipeline,
                                       const std::vector<DeviceAnalysis>& devices) {
    std::vector<std::string> out;
    if (pipeline.empty()) return out;
    std::set<std::pair<int, int>> shapes;
    for (const auto& p : pipeline) shapes.insert({p.stages, p.microbatches});
    const auto& first = pipeline.front();
    std::string shape =
        std::to_string(first.stages) + " stages, " + std::to_string(first.microbatches) + " micro-batches";
    if (shapes.size() > 1) shape += " in the first (shapes differ between steps)";
    const auto sum = pipelineSummary(devices);
    out.push_back("pipeline: " + std::to_string(pipeline.size()) + " step(s), " + shape + "; the stages idle " +
                  formatPercent(sum ? sum->bubble_share : std::nullopt) +
                  " of the pipeline window, fill and drain "
                  "((S-1)/(M+S-1)) explain " +
                  formatPercent(sum ? sum->theoretical_bubble_share : std::nullopt));
    const auto [slow, times] = mostOften(pipeline, [](const PipelineStep& p) { return p.slowest; });
    if (slow >= 0)
        out.push_back("slowest stage: " + deviceName(devices, slow) + " (most compute in " + std::to_string(times) +
                      " of " + std::to_string(pipeline.size()) + " steps)");
    return out;
}

std::vector<std::string> alltoallLines(const std::vector<AllToAllStep>& alltoall,
                                       const std::vector<DeviceAnalysis>& devices) {
    std::vector<std::string> out;
    if (alltoall.empty()) return out;
    int exchanges = 0;
    for (const auto& s : alltoall) exchanges += s.dispatches;
    std::string line =
        "all-to-all: " + std::to_string(exchanges) + " exchange(s) in " + std::to_string(alltoall.size()) + " step(s)";
    if (const auto exposed = exposedAllToAll(devices))
        line += ", " + formatDuration(*exposed) + " exposed over all ranks";
    out.push_back(line);
    double worst = 0;
    if (const AllToAllStep* w = worstAllToAll(alltoall, &worst)) {
        out.push_back("worst imbalance: " + formatFactor(worst) + " of the mean " +
                      (w->bytes_imbalance ? "bytes" : "transfer time") + " in " + stepLabel(w->step) + " (" +
                      deviceName(devices, w->overloaded) + " overloaded)");
        const auto [hot, times] = mostOften(alltoall, [](const AllToAllStep& s) { return s.overloaded; });
        if (hot >= 0)
            out.push_back("overloaded most often: " + deviceName(devices, hot) + " (" + std::to_string(times) + " of " +
                          std::to_string(alltoall.size()) + " steps)");
    }
    return out;
}

std::vector<std::string> p2pLines(const std::vector<P2pTransfer>& p2p) {
    std::vector<std::string> out;
    if (p2p.empty()) return out;
    std::set<std::pair<int, int>> routes;
    uint64_t bytes = 0;
    for (const auto& t : p2p) {
        routes.insert({t.sender.first, t.receiver.first});
        bytes += t.bytes;
    }
    out.push_back("point-to-point: " + std::to_string(p2p.size()) + " send(s) matched with their receives over " +
                  std::to_string(routes.size()) + " device pair(s), " + formatBytes(bytes) +
                  "; time a send or receive spends before its partner arrives counts as waiting");
    return out;
}

TextTable pipelineTable(const std::vector<PipelineStep>& pipeline, const std::vector<DeviceAnalysis>& devices) {
    TextTable t(
        {"stage device", "window", "compute", "bubble", "share", "theory", "fill", "drain", "stall", "slowest in"});
    std::map<int, int> slowest;
    for (const auto& p : pipeline)
        if (p.slowest >= 0) ++slowest[p.slowest];
    for (size_t d = 0; d < devices.size(); ++d) {
        const auto& m = devices[d].pipeline;
        if (!m) continue;
        t.addRow({deviceLabel(devices[d]), formatDuration(m->window_ns), formatDuration(m->compute_ns),
                  formatDuration(m->bubble_ns), formatPercent(m->bubble_share),
                  formatPercent(m->theoretical_bubble_share), formatDuration(m->fill_ns), formatDuration(m->drain_ns),
                  formatDuration(m->stall_ns), std::to_string(slowest[static_cast<int>(d)]) + " step(s)"});
    }
    return t;
}

TextTable alltoallTable(const std::vector<AllToAllStep>& alltoall, const std::vector<DeviceAnalysis>& devices,
                        size_t top) {
    TextTable t({"step", "exchanges", "bytes imbalance", "time imbalance", "overloaded", "exposed"});
    std::vector<const AllToAllStep*> order;
    for (const auto& s : alltoall) order.push_back(&s);
    std::stable_sort(order.begin(), order.end(), [](const AllToAllStep* x, const AllToAllStep* y) {
        return alltoallImbalance(*x).value_or(0) > alltoallImbalance(*y).value_or(0);
    });
    if (top != 0 && order.size() > top) order.resize(top);
    for (const auto* s : order)
        t.addRow({stepLabel(s->step), std::to_string(s->dispatches), formatFactor(s->bytes_imbalance),
                  formatFactor(s->time_imbalance), s->overloaded >= 0 ? deviceName(devices, s->overloaded) : "-",
                  formatDuration(s->exposed_ns)});
    return t;
}

}  // namespace osc::report

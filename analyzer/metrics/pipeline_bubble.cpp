#include "analyzer/metrics/pipeline_bubble.h"

#include "analyzer/metrics/bottleneck.h"
#include "analyzer/metrics/step_keys.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace osc {
namespace {

struct Stage {
    int device = -1;
    int step = -1;
    TimeNs firstCompute = 0;
    PipelineStageMetrics m;
};

std::string percent(double share) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", share * 100.0);
    return buf;
}

std::string stepWords(const StepKey& key) { return key.second < 0 ? "of the capture" : "of the step"; }

Finding bubbleFinding(const Analysis& a, const Stage& st, const PipelineStep& p, const StepKey& key) {
    const auto& m = st.m;
    const double theory = p.theoretical_bubble_share.value_or(0);
    const auto expected = static_cast<TimeNs>(std::llround(theory * static_cast<double>(m.window_ns)));
    const DeviceAnalysis& slow = a.devices[static_cast<size_t>(p.slowest)];
    std::string msg = "Stage " + std::to_string(m.stage) + " of " + std::to_string(p.stages) + " (" +
                      findingDevice(a.devices[static_cast<size_t>(st.device)]) + ") has no compute for " +
                      percent(*m.bubble_share) + " of the pipeline window " + stepWords(key) + " (" +
                      findingDuration(m.bubble_ns) + " of " + findingDuration(m.window_ns) +
                      "); filling and draining " + std::to_string(p.stages) + " stages with " +
                      std::to_string(p.microbatches) + " micro-batches explain " + percent(theory) + ". ";
    msg += p.slowest == st.device
               ? "It is the slowest stage: the others wait for it; move layers off it."
               : "The slowest stage is " + findingDevice(slow) +
                     ": balance the layers across stages, or use more micro-batches or an interleaved "
                     "schedule.";
    return {FindingKind::PipelineBubble, msg, m.bubble_ns - expected};
}

void accumulate(PipelineStageMetrics& total, const PipelineStageMetrics& m, double theory) {
    // The theory, weighted by window, is carried as its expected bubble ns.
    const double expected = total.theoretical_bubble_share.value_or(0) * static_cast<double>(total.window_ns) +
                            theory * static_cast<double>(m.window_ns);
    total.window_ns += m.window_ns;
    total.compute_ns += m.compute_ns;
    total.bubble_ns += m.bubble_ns;
    total.fill_ns += m.fill_ns;
    total.drain_ns += m.drain_ns;
    total.stall_ns += m.stall_ns;
    total.stages = std::max(total.stages, m.stages);
    total.microbatches = std::max(total.microbatches, m.microbatches);
    if (total.window_ns > 0) {
        total.bubble_share = static_cast<double>(total.bubble_ns) / static_cast<double>(total.window_ns);
        total.theoretical_bubble_share = expected / static_cast<double>(total.window_ns);
    }
}

}  // namespace

// On a pipeline stage, long idle stretches during fill and drain are the
// bubble, not the host, and a receive waiting for a slower stage counts as
// communication: say so where the idle-gap finding blames the host and the
// communication-bound one the interconnect.
void notePipelineInFindings(std::vector<Finding>& findings) {
    for (auto& f : findings) {
        if (f.message.find("pipeline") != std::string::npos) continue;
        if (f.kind == FindingKind::IdleGap)
            f.message +=
                " On a pipeline stage, idle time while the other stages fill and drain the pipeline is "
                "its bubble (see the pipeline section), not the host.";
        if (f.kind == FindingKind::CommunicationBound)
            f.message +=
                " On a pipeline stage, sends and receives waiting for the other stages count as "
                "communication: see how much of it is waiting, and the pipeline section.";
    }
}

// The stage's compute inside the window: total, first start and last end.
PipelineStageMeasure measurePipelineStage(const IntervalSet& compute, Interval window) {
    PipelineStageMeasure st;
    PipelineStageMetrics& m = st.m;
    m.window_ns = window.length();
    m.compute_ns = lengthWithin(compute, window);
    auto first = std::lower_bound(compute.begin(), compute.end(), window.start,
                                  [](const Interval& i, TimeNs t) { return i.end <= t; });
    auto past = std::lower_bound(compute.begin(), compute.end(), window.end,
                                 [](const Interval& i, TimeNs t) { return i.start < t; });
    if (m.compute_ns == 0 || first == compute.end() || past == compute.begin()) {
        st.firstCompute = window.end;
        m.fill_ns = m.window_ns;
    } else {
        st.firstCompute = std::max(first->start, window.start);
        const TimeNs lastEnd = std::min(std::prev(past)->end, window.end);
        m.fill_ns = st.firstCompute - window.start;
        m.drain_ns = window.end - lastEnd;
    }
    m.bubble_ns = m.window_ns - m.compute_ns;
    m.stall_ns = m.bubble_ns - m.fill_ns - m.drain_ns;
    m.bubble_share = m.window_ns > 0
                         ? std::optional<double>(static_cast<double>(m.bubble_ns) / static_cast<double>(m.window_ns))
                         : std::nullopt;
    return st;
}

PipelinePlan planPipeline(const Analysis& a,
                          const std::vector<const std::vector<DeviceIntervals::MicroBatches>*>& microbatchesOf) {
    struct Entry {
        int device;
        int step;  // device step index, -1 outside steps
        const DeviceIntervals::MicroBatches* mb;
    };
    std::map<StepKey, std::vector<Entry>> byStep;
    for (size_t d = 0; d < a.devices.size() && d < microbatchesOf.size(); ++d) {
        if (!microbatchesOf[d] || microbatchesOf[d]->empty()) continue;
        const auto keys = stepKeys(a.devices[d]);
        for (const auto& mb : *microbatchesOf[d]) {
            const bool inStep = mb.step >= 0 && static_cast<size_t>(mb.step) < keys.size();
            byStep[inStep ? keys[static_cast<size_t>(mb.step)] : kOutsideSteps].push_back(
                {static_cast<int>(d), inStep ? mb.step : -1, &mb});
        }
    }
    PipelinePlan plan;
    for (const auto& [key, entries] : byStep) {
        const int devices = static_cast<int>(entries.size());
        if (devices < 2 && a.settings.pipelineStages < 2) continue;
        PipelineStep p;
        p.step = key.first;
        p.start_ns = INT64_MAX;
        p.end_ns = INT64_MIN;
        for (const auto& e : entries) {
            p.start_ns = std::min(p.start_ns, e.mb->compute.start);
            p.end_ns = std::max(p.end_ns, e.mb->compute.end);
            p.microbatches = std::max(p.microbatches, e.mb->forward > 0 ? e.mb->forward : e.mb->backward);
        }
        if (p.end_ns <= p.start_ns) continue;
        p.stages = a.settings.pipelineStages > 0 ? a.settings.pipelineStages : devices;
        if (p.stages + p.microbatches > 1)
            p.theoretical_bubble_share =
                static_cast<double>(p.stages - 1) / static_cast<double>(p.microbatches + p.stages - 1);
        PipelinePlan::Window w{key, std::move(p), {}};
        for (const auto& e : entries) w.stages.push_back({e.device, e.step});
        plan.windows.push_back(std::move(w));
    }
    return plan;
}

void finishPipeline(Analysis& a, const PipelinePlan& plan,
                    const std::vector<std::vector<PipelineStageMeasure>>& measured) {
    a.pipeline.clear();
    for (auto& d : a.devices) {
        d.pipeline.reset();
        for (auto& s : d.steps) s.pipeline.reset();
    }
    for (size_t wi = 0; wi < plan.windows.size(); ++wi) {
        const auto& window = plan.windows[wi];
        const StepKey& key = window.key;
        PipelineStep p = window.step;
        std::vector<Stage> stages;
        for (size_t i = 0; i < window.stages.size(); ++i) {
            Stage st;
            st.device = window.stages[i].device;
            st.step = window.stages[i].step;
            st.firstCompute = measured[wi][i].firstCompute;
            st.m = measured[wi][i].m;
            st.m.stages = p.stages;
            st.m.microbatches = p.microbatches;
            st.m.theoretical_bubble_share = p.theoretical_bubble_share;
            stages.push_back(st);
        }
        std::sort(stages.begin(), stages.end(), [](const Stage& x, const Stage& y) {
            return std::tie(x.firstCompute, x.device) < std::tie(y.firstCompute, y.device);
        });
        size_t slowest = 0;
        for (size_t i = 0; i < stages.size(); ++i) {
            stages[i].m.stage = static_cast<int>(i);
            p.devices.push_back(stages[i].device);
            if (stages[i].m.compute_ns > stages[slowest].m.compute_ns ||
                (stages[i].m.compute_ns == stages[slowest].m.compute_ns && stages[i].device < stages[slowest].device))
                slowest = i;
        }
        stages[slowest].m.slowest = true;
        p.slowest = stages[slowest].device;

        for (const auto& st : stages) {
            auto& dev = a.devices[static_cast<size_t>(st.device)];
            const double theory = p.theoretical_bubble_share.value_or(0);
            if (!dev.pipeline) dev.pipeline = PipelineStageMetrics{};
            accumulate(*dev.pipeline, st.m, theory);
            if (st.step >= 0) dev.steps[static_cast<size_t>(st.step)].pipeline = st.m;
            if (st.m.bubble_share && p.theoretical_bubble_share &&
                *st.m.bubble_share - theory > a.settings.bubbleExcessShare) {
                Finding f = bubbleFinding(a, st, p, key);
                if (st.step >= 0)
                    addFinding(dev.steps[static_cast<size_t>(st.step)].bottleneck.findings, std::move(f));
                else
                    addFinding(dev.findings, std::move(f));
            }
        }
        a.pipeline.push_back(std::move(p));
    }
    for (auto& d : a.devices)
        if (d.pipeline) {
            d.pipeline->stage = -1;
            d.pipeline->slowest = false;
            notePipelineInFindings(d.findings);
            for (auto& s : d.steps)
                if (s.pipeline) notePipelineInFindings(s.bottleneck.findings);
        }
    std::stable_sort(a.pipeline.begin(), a.pipeline.end(),
                     [](const PipelineStep& x, const PipelineStep& y) { return x.start_ns < y.start_ns; });
}

}  // namespace osc

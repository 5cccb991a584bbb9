#include "gui/model/pipeline_bubbles.h"

#include "analyzer/metrics/pipeline_bubble.h"
#include "gui/model/time_ticks.h"

#include <algorithm>

namespace osc::gui {
namespace {

const char* partMeaning(BubblePart p) {
    switch (p) {
        case BubblePart::Fill:
            return "waiting for the first micro-batch from the stages before it";
        case BubblePart::Drain:
            return "the pipeline drains after this stage's last compute";
        case BubblePart::Stall:
            return "between micro-batches, waiting for a neighbour stage";
    }
    return "";
}

// The window's bubble on one stage as the analyzer measures it
// (measurePipelineStage): fill before the first compute in the window, drain
// after the last, stall in the gaps between, which are shaded as they lie.
void addStep(StageBubbles& out, int step, Interval w, const IntervalSet& compute) {
    auto add = [&](TimeNs s, TimeNs e, BubblePart part) {
        if (!out.intervals.empty()) s = std::max(s, out.intervals.back().end);
        if (e > s) out.intervals.push_back({s, e, part, step});
    };
    const PipelineStageMeasure measured = measurePipelineStage(compute, w);
    StageBubbleStep& st = out.steps[static_cast<size_t>(step)];
    st.fill_ns = measured.m.fill_ns;
    st.drain_ns = measured.m.drain_ns;
    st.stall_ns = measured.m.stall_ns;
    st.bubble_ns = measured.m.bubble_ns;
    st.share = measured.m.bubble_share.value_or(0.0);
    const TimeNs lastEnd = w.end - st.drain_ns;
    add(w.start, measured.firstCompute, BubblePart::Fill);
    if (measured.firstCompute < lastEnd) {
        const Interval busy{measured.firstCompute, lastEnd};
        for (const Interval& gap : subtract({busy}, clip(compute, busy))) add(gap.start, gap.end, BubblePart::Stall);
    }
    add(lastEnd, w.end, BubblePart::Drain);
}

}  // namespace

const char* bubblePartName(BubblePart part) {
    switch (part) {
        case BubblePart::Fill:
            return "fill";
        case BubblePart::Drain:
            return "drain";
        case BubblePart::Stall:
            return "stall";
    }
    return "";
}

size_t StageBubbles::firstEndingAfter(TimeNs t) const {
    return static_cast<size_t>(std::upper_bound(intervals.begin(), intervals.end(), t,
                                                [](TimeNs v, const BubbleInterval& i) { return v < i.end; }) -
                               intervals.begin());
}

const BubbleInterval* StageBubbles::at(TimeNs t) const {
    const size_t i = firstEndingAfter(t);
    return i < intervals.size() && intervals[i].start <= t ? &intervals[i] : nullptr;
}

StageBubbles stageBubbles(const Analysis& a, int device, const IntervalSet& compute) {
    StageBubbles out;
    for (const PipelineStep& p : a.pipeline) {
        const auto at = std::find(p.devices.begin(), p.devices.end(), device);
        if (at == p.devices.end() || p.end_ns <= p.start_ns) continue;
        StageBubbleStep st;
        st.step = p.step;
        st.stage = static_cast<int>(at - p.devices.begin());
        st.stages = p.stages;
        st.microbatches = p.microbatches;
        st.slowest = p.slowest == device;
        st.window = {p.start_ns, p.end_ns};
        st.theory = p.theoretical_bubble_share;
        out.steps.push_back(st);
        addStep(out, static_cast<int>(out.steps.size()) - 1, st.window, compute);
    }
    return out;
}

std::string bubbleText(const StageBubbles& b, const BubbleInterval& i) {
    const StageBubbleStep& st = b.steps.at(static_cast<size_t>(i.step));
    std::string text = "pipeline bubble · " + std::string(bubblePartName(i.part)) + " " +
                       formatDuration(i.end - i.start, 4) + ": " + partMeaning(i.part) + "\n";
    text += (st.step.empty() ? std::string("whole capture") : st.step) + ", stage " + std::to_string(st.stage) +
            " of " + std::to_string(st.stages) + (st.slowest ? " (the slowest)" : "") + ": bubble " +
            formatDuration(st.bubble_ns, 4) + " = " + formatPercent(st.share) + " of the " +
            formatDuration(st.window.length(), 4) + " pipeline window (fill " + formatDuration(st.fill_ns, 4) +
            ", drain " + formatDuration(st.drain_ns, 4) + ", stall " + formatDuration(st.stall_ns, 4) + ")";
    if (st.theory) {
        const int s = st.stages, m = st.microbatches;
        text += "\ntheory (S−1)/(M+S−1) = " + std::to_string(s - 1) + "/" + std::to_string(m + s - 1) + " = " +
                formatPercent(*st.theory) + " for " + std::to_string(s) + " stages and " + std::to_string(m) +
                " micro-batches";
    }
    return text;
}

}  // namespace osc::gui

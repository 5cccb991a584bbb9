// Pipeline bubbles and send/receive links in the GUI models (issue 18):
// which intervals get shaded and which kernels get linked, on the
// hand-worked Examples 6 and 7 of docs/metrics.md, on random stages against
// a per-nanosecond oracle, and on synth pipeline and all-to-all captures
// whose answers analyzer/synth/README.md works out; always also against the
// analyzer's numbers for the same capture.
#include "analyzer/synth/pattern_synth.h"
#include "gui/model/hover_text.h"
#include "gui/model/kernel_links.h"
#include "gui/model/lane_layout.h"
#include "gui/render/frame_builder.h"
#include "tests/gui/pattern_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace osc;
using namespace osc::gui;
using namespace osc::guitest;

// ---- which intervals are shaded ----

TEST(PipelineBubbles, Example7BalancedStagesShadeTheirStallsFillAndDrain) {
    const Loaded l = load(example7(false));
    ASSERT_EQ(l.analysis->pipeline.size(), 1u);
    // Stage 0 runs F0 F1 [0, 20), B0 [40, 60), B1 [70, 90): stalls only.
    expectIntervals(groupOf(l, 0).bubbles, {{us(20), us(40), BubblePart::Stall}, {us(60), us(70), BubblePart::Stall}});
    // Stage 1 computes [10, 70) without a gap: fill before, drain after.
    expectIntervals(groupOf(l, 1).bubbles, {{us(0), us(10), BubblePart::Fill}, {us(70), us(90), BubblePart::Drain}});
    for (int rank : {0, 1}) {
        const StageBubbles& b = groupOf(l, rank).bubbles;
        ASSERT_EQ(b.steps.size(), 1u);
        EXPECT_EQ(b.steps[0].stage, rank);
        EXPECT_EQ(b.steps[0].window, (Interval{0, us(90)}));
        EXPECT_DOUBLE_EQ(b.steps[0].share, 1.0 / 3.0);
        EXPECT_DOUBLE_EQ(*b.steps[0].theory, 1.0 / 3.0);
        // The same split as the analyzer's.
        const PipelineStageMetrics& m =
            *l.analysis->devices[static_cast<size_t>(groupOf(l, rank).analysisDevice)].pipeline;
        EXPECT_EQ(b.steps[0].fill_ns, m.fill_ns);
        EXPECT_EQ(b.steps[0].drain_ns, m.drain_ns);
        EXPECT_EQ(b.steps[0].stall_ns, m.stall_ns);
    }
}

TEST(PipelineBubbles, Example7SlowSecondStageAndItsTooltip) {
    const Loaded l = load(example7(true));
    expectIntervals(groupOf(l, 0).bubbles, {{us(20), us(55), BubblePart::Stall}, {us(75), us(100), BubblePart::Stall}});
    expectIntervals(groupOf(l, 1).bubbles, {{us(0), us(10), BubblePart::Fill}, {us(100), us(120), BubblePart::Drain}});
    EXPECT_TRUE(groupOf(l, 1).bubbles.steps[0].slowest);
    EXPECT_FALSE(groupOf(l, 0).bubbles.steps[0].slowest);

    // Hovering stage 0's compute lane in its first stall (no kernel there).
    const int lane = laneOfStream(l, 0, 7);
    const TimeScale scale({0, us(120)}, 1200);  // 100 ns per pixel
    const std::string tip = hoverText(*l.model, l.analysis.get(), lane, 0, scale, scale.toX(us(30)));
    EXPECT_NE(tip.find("stall 35 µs"), std::string::npos) << tip;
    EXPECT_NE(tip.find("stage 0 of 2"), std::string::npos) << tip;
    EXPECT_NE(tip.find("bubble 60 µs = 50.0 %"), std::string::npos) << tip;
    EXPECT_NE(tip.find("(S−1)/(M+S−1) = 1/3 = 33.3 %"), std::string::npos) << tip;
    // Over a kernel: the kernel, not the bubble.
    const std::string onKernel = hoverText(*l.model, l.analysis.get(), lane, 0, scale, scale.toX(us(60)));
    EXPECT_EQ(onKernel.find("pipeline bubble"), std::string::npos) << onKernel;
    EXPECT_NE(onKernel.find("ampere"), std::string::npos) << onKernel;
    // Stage 1's drain.
    const std::string drain =
        hoverText(*l.model, l.analysis.get(), laneOfStream(l, 1, 7), 0, scale, scale.toX(us(110)));
    EXPECT_NE(drain.find("drain 20 µs"), std::string::npos) << drain;
    EXPECT_NE(drain.find("(the slowest)"), std::string::npos) << drain;
}

TEST(PipelineBubbles, SynthPipelineMatchesTheFormulasAndTilesTheWindow) {
    synth::PipelineSpec spec;  // S = 4, M = 8, 3 steps, t_f 0.5 ms, t_b 1 ms
    const Loaded l = load(synth::synthesizePipeline(spec));
    const TimeNs tf = spec.forwardNs, tb = spec.backwardNs;
    const int S = spec.stages;
    for (int s = 0; s < S; ++s) {
        const DeviceGroup& g = groupOf(l, s);
        ASSERT_EQ(g.bubbles.steps.size(), 3u) << s;
        for (size_t k = 0; k < g.bubbles.steps.size(); ++k) {
            const StageBubbleStep& st = g.bubbles.steps[k];
            EXPECT_EQ(st.stage, s);
            EXPECT_EQ(st.window.length(), (spec.microbatches + S - 1) * (tf + tb));
            // analyzer/synth/README.md: fill s·t_f, drain s·t_b, stall (S−1−s)(t_f+t_b).
            EXPECT_EQ(st.fill_ns, s * tf) << s;
            EXPECT_EQ(st.drain_ns, s * tb) << s;
            EXPECT_EQ(st.stall_ns, (S - 1 - s) * (tf + tb)) << s;
            EXPECT_NEAR(st.share, 3.0 / 11.0, 1e-12);
            TimeNs byPart[3] = {0, 0, 0};
            for (const BubbleInterval& i : g.bubbles.intervals)
                if (i.step == static_cast<int>(k)) byPart[static_cast<int>(i.part)] += i.end - i.start;
            EXPECT_EQ(byPart[0], st.fill_ns);
            EXPECT_EQ(byPart[1], st.drain_ns);
            EXPECT_EQ(byPart[2], st.stall_ns);
            // The analyzer's numbers for the same step of this device.
            const auto& dsteps = l.analysis->devices[static_cast<size_t>(g.analysisDevice)].steps;
            const auto ds =
                std::find_if(dsteps.begin(), dsteps.end(), [&](const StepAnalysis& x) { return x.name == st.step; });
            ASSERT_TRUE(ds != dsteps.end() && ds->pipeline) << st.step;
            EXPECT_EQ(ds->pipeline->fill_ns, st.fill_ns);
            EXPECT_EQ(ds->pipeline->drain_ns, st.drain_ns);
            EXPECT_EQ(ds->pipeline->stall_ns, st.stall_ns);
            EXPECT_EQ(ds->pipeline->window_ns, st.window.length());
            EXPECT_DOUBLE_EQ(*ds->pipeline->bubble_share, st.share);
        }
        // Brute force: in every window, the shaded intervals and the
        // stage's compute kernels never overlap and together cover it.
        const Device& dev = *l.model->deviceOf(groupOfRank(l, s));
        for (const StageBubbleStep& st : g.bubbles.steps) {
            std::vector<Interval> parts;
            for (size_t k = 0; k < dev.kernels.size(); ++k)
                if (l.model->capture().strings.at(dev.kernels.name[k]).find("nccl") == std::string::npos)
                    parts.push_back(
                        {std::max(dev.kernels.start[k], st.window.start), std::min(dev.kernels.end[k], st.window.end)});
            for (const BubbleInterval& i : g.bubbles.intervals) parts.push_back({i.start, i.end});
            std::erase_if(parts, [&](const Interval& i) {
                return i.end <= i.start || i.end <= st.window.start || i.start >= st.window.end;
            });
            std::sort(parts.begin(), parts.end(),
                      [](const Interval& a, const Interval& b) { return a.start < b.start; });
            TimeNs at = st.window.start;
            for (const Interval& i : parts) {
                EXPECT_EQ(i.start, at) << "stage " << s;  // no gap, no overlap
                at = i.end;
            }
            EXPECT_EQ(at, st.window.end);
        }
    }
}

// Random stages: micro-batch kernels (each launched in its own `fwd mb N` /
// `bwd mb N` range), compute kernels outside any micro-batch (they count
// as compute, docs/design.md section 4's C) and an all-reduce (it does not), in ns. The oracle
// walks every nanosecond: the window P spans the micro-batch kernels of all
// stages; a stage's shaded ns are those of P with none of its compute; fill
// before its first compute in P, drain after its last, stall in between.
TEST(PipelineBubbles, RandomStagesMatchAPerNanosecondOracleAndTheAnalyzer) {
    constexpr TimeNs kSpan = 3000;
    const std::string kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    std::mt19937 rng(18);
    auto pick = [&](TimeNs lo, TimeNs hi) { return std::uniform_int_distribution<TimeNs>(lo, hi)(rng); };
    for (int trial = 0; trial < 40; ++trial) {
        const int S = static_cast<int>(pick(2, 4));
        osc::testing::TraceBuilder b;
        std::vector<std::vector<Interval>> compute(static_cast<size_t>(S));
        TimeNs mbStart = INT64_MAX, mbEnd = INT64_MIN;
        for (int r = 0; r < S; ++r) {
            TimeNs cpu = 0;
            const int mbs = static_cast<int>(pick(1, 6));
            for (int k = 0; k < mbs; ++k) {
                const TimeNs st = pick(0, kSpan - 400), e = st + pick(1, 300);
                cpu += 10;
                b.range(r, std::string(k % 2 ? "bwd" : "fwd") + " mb " + std::to_string(k / 2), cpu, cpu + 5);
                // Streams 7 and 8: micro-batches may overlap each other.
                b.launched(r, 0, kGemm, cpu + 1, st, e, static_cast<uint32_t>(7 + k % 2));
                compute[static_cast<size_t>(r)].push_back({st, e});
                mbStart = std::min(mbStart, st);
                mbEnd = std::max(mbEnd, e);
            }
            for (int k = static_cast<int>(pick(0, 2)); k > 0; --k) {  // outside any micro-batch range
                const TimeNs st = pick(0, kSpan), e = st + pick(1, 200);
                b.kernel(r, 0, kGemm, st, e, 9);
                compute[static_cast<size_t>(r)].push_back({st, e});
            }
            const TimeNs st = pick(0, kSpan);
            b.kernel(r, 0, kAllReduce, st, st + pick(1, 500), 13);
        }
        const Loaded l = load(b.finalized());
        ASSERT_EQ(l.analysis->pipeline.size(), 1u) << "trial " << trial;
        EXPECT_EQ(l.analysis->pipeline[0].start_ns, mbStart);
        EXPECT_EQ(l.analysis->pipeline[0].end_ns, mbEnd);
        for (int r = 0; r < S; ++r) {
            std::vector<char> busy(static_cast<size_t>(kSpan + 600), 0);
            for (const Interval& c : compute[static_cast<size_t>(r)])
                for (TimeNs t = c.start; t < c.end; ++t) busy[static_cast<size_t>(t)] = 1;
            TimeNs first = mbEnd, last = mbStart;  // first and last ns of compute in P
            for (TimeNs t = mbStart; t < mbEnd; ++t)
                if (busy[static_cast<size_t>(t)]) first = std::min(first, t), last = std::max(last, t + 1);
            TimeNs want[3] = {0, 0, 0};  // fill, drain, stall
            const StageBubbles& g = groupOf(l, r).bubbles;
            ASSERT_EQ(g.steps.size(), 1u);
            for (TimeNs t = mbStart - 50; t < mbEnd + 50; ++t) {
                const bool inP = t >= mbStart && t < mbEnd;
                const BubbleInterval* got = g.at(t);
                if (!inP || busy[static_cast<size_t>(t)]) {
                    ASSERT_EQ(got, nullptr) << "trial " << trial << " rank " << r << " t=" << t;
                    continue;
                }
                const BubblePart part = t < first   ? BubblePart::Fill
                                        : t >= last ? BubblePart::Drain
                                                    : BubblePart::Stall;
                ++want[static_cast<int>(part)];
                ASSERT_NE(got, nullptr) << "trial " << trial << " rank " << r << " t=" << t;
                ASSERT_EQ(got->part, part) << "trial " << trial << " rank " << r << " t=" << t;
            }
            const StageBubbleStep& st = g.steps[0];
            EXPECT_EQ(st.fill_ns, want[0]);
            EXPECT_EQ(st.drain_ns, want[1]);
            EXPECT_EQ(st.stall_ns, want[2]);
            // The analyzer's numbers (no steps: the whole capture, summed once).
            const PipelineStageMetrics& m =
                *l.analysis->devices[static_cast<size_t>(groupOf(l, r).analysisDevice)].pipeline;
            EXPECT_EQ(m.fill_ns, want[0]) << "trial " << trial << " rank " << r;
            EXPECT_EQ(m.drain_ns, want[1]) << "trial " << trial << " rank " << r;
            EXPECT_EQ(m.stall_ns, want[2]) << "trial " << trial << " rank " << r;
            EXPECT_EQ(m.bubble_ns, st.bubble_ns);
        }
    }
}

TEST(PipelineBubbles, ZoomedOutAFrameDrawsPerColumnNotPerInterval) {
    synth::PipelineSpec spec;
    spec.microbatches = 32;
    spec.steps = 20;
    spec.transferNs = 50'000;  // round trips stall the steady state: a short stall per micro-batch
    const Loaded l = load(synth::synthesizePipeline(spec));
    size_t intervals = 0;
    for (const auto& g : l.model->groups()) intervals += g.bubbles.intervals.size();
    LaneLayout layout(*l.model);
    Viewport vp;
    vp.scale = TimeScale({l.model->begin(), l.model->end()}, 200);
    vp.clipBottom = 1e6;
    DrawList list;
    FrameBuilder(*l.model, layout).build(vp, list);
    size_t streamLanes = 0;
    for (const LaneSlot& s : layout.lanes()) streamLanes += l.model->lane(s.lane).kind == LaneKind::Stream;
    ASSERT_GT(intervals, 2000u);
    EXPECT_GT(list.hatches.size(), 0u);
    // Each hatch is a run of at least one column between two unshaded ones.
    EXPECT_LE(list.hatches.size(), streamLanes * 100);
    for (const DrawRect& r : list.hatches) EXPECT_GE(r.w, 1.f);
}

// At random zooms, the hatched pixel columns of a stage's lane are exactly
// those the oracle finds by rounding each interval's ends to columns and
// marking every column in between (brute force over all intervals).
TEST(PipelineBubbles, HatchedColumnsAtRandomZoomsMatchBruteForce) {
    synth::PipelineSpec spec;
    spec.microbatches = 16;
    spec.transferNs = 30'000;  // many short stalls: thousands of intervals
    const Loaded l = load(synth::synthesizePipeline(spec));
    LaneLayout layout(*l.model);
    std::mt19937 rng(7);
    const TimeNs begin = l.model->begin(), end = l.model->end();
    for (int trial = 0; trial < 30; ++trial) {
        const TimeNs len = std::uniform_int_distribution<TimeNs>(20'000, end - begin)(rng);
        const TimeNs from = std::uniform_int_distribution<TimeNs>(begin - len / 4, end - len / 2)(rng);
        const int width = std::uniform_int_distribution<int>(50, 1500)(rng);
        Viewport vp;
        vp.scale = TimeScale({from, from + len}, width);
        vp.left = 100;
        vp.clipBottom = 1e6;
        DrawList list;
        FrameBuilder(*l.model, layout).build(vp, list);
        for (int s = 0; s < spec.stages; ++s) {
            const LaneSlot* slot = layout.slotOf(laneOfStream(l, s, 7));
            ASSERT_NE(slot, nullptr);
            std::vector<char> got(static_cast<size_t>(width) + 1, 0), want(got.size(), 0);
            for (const DrawRect& r : list.hatches)
                if (r.y == static_cast<float>(slot->y))
                    for (int x = static_cast<int>(r.x - vp.left); x < static_cast<int>(r.x - vp.left + r.w); ++x) {
                        ASSERT_FALSE(got[static_cast<size_t>(x)]) << "column " << x << " hatched twice";
                        got[static_cast<size_t>(x)] = 1;
                    }
            auto column = [&](TimeNs t) {
                return std::clamp(static_cast<int>(std::lround(vp.scale.toX(t))), 0, width);
            };
            for (const BubbleInterval& i : groupOf(l, s).bubbles.intervals)
                for (int x = column(i.start); x < column(i.end); ++x) want[static_cast<size_t>(x)] = 1;
            ASSERT_EQ(got, want) << "trial " << trial << " stage " << s;
        }
    }
}

// ---- which kernels are linked ----

TEST(PeerLinks, Example6ReceiveLinksItsSendWithWaitingAndTransfer) {
    const Loaded l = load(example6());
    ASSERT_EQ(l.analysis->p2p.size(), 2u);
    const EventRef send0 = kth(l, 0, 13, 0), recv0 = kth(l, 0, 14, 0);
    const EventRef recv1 = kth(l, 1, 14, 0), send1 = kth(l, 1, 13, 0);
    ASSERT_TRUE(send0.valid() && recv0.valid() && recv1.valid() && send1.valid());

    // Rank 1's receive [40, 160): its partner is rank 0's send [100, 160).
    const KernelLinks r = linkedKernels(*l.model, l.analysis.get(), recv1);
    ASSERT_EQ(r.partners.size(), 1u);
    EXPECT_EQ(r.partners[0], send0);
    ASSERT_EQ(r.arrows.size(), 1u);
    EXPECT_EQ(r.arrows[0].from, send0);  // sender to receiver
    EXPECT_EQ(r.arrows[0].to, recv1);
    EXPECT_EQ(r.arrows[0].at, us(100));  // both there from rank 0's start
    EXPECT_FALSE(r.arrows[0].bothWays);
    ASSERT_EQ(r.transfers.size(), 1u);
    EXPECT_FALSE(r.transfers[0].send);
    EXPECT_EQ(r.transfers[0].bytes, MiB);
    const DetailList d = eventDetails(*l.model, recv1, l.analysis.get());
    EXPECT_EQ(valueOf(d, "receive from").rfind("rank 0 · GPU 0, 1 MiB; its kernel starts 60 µs later", 0), 0u)
        << valueOf(d, "receive from");
    EXPECT_EQ(valueOf(d, "waiting for partner"), "60 µs");
    EXPECT_EQ(valueOf(d, "transfer"), "60 µs");
    EXPECT_EQ(valueOf(d, "last to arrive"), "rank 0 · GPU 0");
    EXPECT_EQ(valueOf(d, "bytes"), "1 MiB");

    // Rank 0's send: no waiting, it arrived last.
    const DetailList s = eventDetails(*l.model, send0, l.analysis.get());
    EXPECT_EQ(valueOf(s, "send to").rfind("rank 1 · GPU 0, 1 MiB", 0), 0u) << valueOf(s, "send to");
    // Its partner started before it: said in words, not as a negative offset
    // ("starts -60 µs from here", issue 30 item 15).
    EXPECT_NE(valueOf(s, "send to").find("its kernel starts 60 µs earlier"), std::string::npos)
        << valueOf(s, "send to");
    EXPECT_EQ(valueOf(s, "waiting for partner"), "0 ns");
    EXPECT_EQ(valueOf(s, "transfer"), "60 µs");
    EXPECT_EQ(valueOf(s, "last to arrive"), "this kernel");

    // The second pair: rank 1's send [270, 280) ended before rank 0's receive
    // [300, 310) began. The arrow sits on the receive; nobody waited.
    const KernelLinks back = linkedKernels(*l.model, l.analysis.get(), recv0);
    ASSERT_EQ(back.arrows.size(), 1u);
    EXPECT_EQ(back.arrows[0].from, send1);
    EXPECT_EQ(back.arrows[0].to, recv0);
    EXPECT_EQ(back.arrows[0].at, us(300));
    const DetailList b = eventDetails(*l.model, send1, l.analysis.get());
    EXPECT_EQ(valueOf(b, "waiting for partner"), "0 ns");
    EXPECT_EQ(valueOf(b, "transfer"), "10 µs");

    // Compute kernels link nothing; the group label counts pairs.
    EXPECT_TRUE(linkedKernels(*l.model, l.analysis.get(), kth(l, 0, 7, 0)).partners.empty());
    EXPECT_NE(groupOf(l, 0).label.find("last at 1 of 2 send/receive pairs"), std::string::npos) << groupOf(l, 0).label;
    // Without the analysis the peer is unknown: a send matches nothing by position.
    EXPECT_TRUE(l.model->matchingCollectives(recv1).empty());
}

// Ring exchange: each rank's one SendRecv kernel sends to and receives from
// the other (µs). Rank 1's kernel [30, 80) starts while rank 0's [0, 60)
// runs: one pair of kernels, two transfers, and rank 1 arrived last at it.
TEST(PeerLinks, AKernelPairWithTransfersBothWaysIsOnePairAndOneArrow) {
    osc::testing::TraceBuilder b;
    for (const auto& [rank, s, e] : {std::tuple{0, 0, 60}, std::tuple{1, 30, 80}}) {
        b.kernel(rank, 0, kSendRecv, us(s), us(e), 13);
        b.p2pRow(rank, 0, 0xc0ffee, "Send", 1 - rank, 2, MiB, us(s), us(e));
        b.p2pRow(rank, 0, 0xc0ffee, "Recv", 1 - rank, 2, MiB, us(s), us(e));
    }
    const Loaded l = load(b.finalized());
    ASSERT_EQ(l.analysis->p2p.size(), 2u);
    const size_t d1 = static_cast<size_t>(groupOf(l, 1).analysisDevice);
    EXPECT_EQ(l.analysis->devices[d1].last_arrivals, 1);
    EXPECT_NE(groupOf(l, 1).label.find("last at 1 of 1 send/receive pairs"), std::string::npos) << groupOf(l, 1).label;
    EXPECT_EQ(groupOf(l, 0).label.find("last at"), std::string::npos) << groupOf(l, 0).label;

    const KernelLinks ls = linkedKernels(*l.model, l.analysis.get(), kth(l, 0, 13, 0));
    EXPECT_EQ(ls.partners, std::vector<EventRef>{kth(l, 1, 13, 0)});
    ASSERT_EQ(ls.arrows.size(), 1u);
    EXPECT_TRUE(ls.arrows[0].bothWays);
    EXPECT_EQ(ls.arrows[0].at, us(30));
    EXPECT_EQ(ls.transfers.size(), 2u);
    const DetailList d = eventDetails(*l.model, kth(l, 0, 13, 0), l.analysis.get());
    EXPECT_EQ(valueOf(d, "exchange with").rfind("rank 1 · GPU 0, sends 1 MiB, receives 1 MiB", 0), 0u)
        << valueOf(d, "exchange with");
    EXPECT_EQ(valueOf(d, "waiting for partner"), "30 µs");
    EXPECT_EQ(valueOf(d, "transfer"), "30 µs");
    EXPECT_EQ(valueOf(d, "last to arrive"), "rank 1 · GPU 0");
}

TEST(PeerLinks, SynthPipelineLinksEachSendAndReceiveToOneNeighbour) {
    synth::PipelineSpec spec;
    spec.transferNs = 20'000;
    const Loaded l = load(synth::synthesizePipeline(spec));
    // analyzer/synth/README.md: every handover is one send and one receive
    // kernel on neighbouring stages, both ending when the data has moved;
    // 2(S−1)M of them per step. (Which of two kernels of one stage that run
    // at exactly the same times is the send is beyond the plugin rows, which
    // carry no stream: only the stages and times are checked here; Example 6
    // above checks exact pairs.)
    size_t kernels = 0, sends = 0;
    for (int s = 0; s < spec.stages; ++s) {
        const int group = groupOfRank(l, s);
        for (int laneIndex : l.model->groups()[static_cast<size_t>(group)].lanes) {
            const Lane& lane = l.model->lane(laneIndex);
            if (lane.kind != LaneKind::Stream || lane.stream < 13) continue;
            for (size_t k = 0; k < lane.rows[0].size(); ++k) {
                const EventRef self{laneIndex, 0, k};
                const KernelLinks ls = linkedKernels(*l.model, l.analysis.get(), self);
                ASSERT_EQ(ls.partners.size(), 1u) << "stage " << s << " stream " << lane.stream << " #" << k;
                ASSERT_EQ(ls.arrows.size(), 1u);
                ASSERT_EQ(ls.transfers.size(), 1u);
                const EventRef other = ls.partners[0];
                const int otherStage = std::abs(l.model->lane(other.lane).group - group);
                EXPECT_EQ(otherStage, 1) << "a neighbour";
                const EventRow& row = lane.rows[0];
                const EventRow& orow = l.model->lane(other.lane).rows[0];
                EXPECT_EQ(row.end[k], orow.end[other.index]);
                EXPECT_EQ(ls.transfers[0].bytes, spec.activationBytes);
                EXPECT_FALSE(ls.arrows[0].bothWays);
                EXPECT_EQ(ls.arrows[0].from, ls.transfers[0].send ? self : other);
                EXPECT_EQ(ls.arrows[0].to, ls.transfers[0].send ? other : self);
                EXPECT_EQ(ls.arrows[0].at, std::max(row.start[k], orow.start[other.index]));
                // Linked both ways: the partner's partner is this kernel.
                EXPECT_EQ(linkedKernels(*l.model, l.analysis.get(), other).partners, std::vector<EventRef>{self});
                ++kernels;
                sends += ls.transfers[0].send;
            }
        }
    }
    const size_t pairs = static_cast<size_t>(2 * (spec.stages - 1) * spec.microbatches * spec.steps);
    EXPECT_EQ(kernels, 2 * pairs);
    EXPECT_EQ(sends, pairs);
}

TEST(PeerLinks, SynthAllToAllLinksEveryRankOfTheExchange) {
    synth::AllToAllSpec spec;  // 4 ranks, 3 steps, 4 MiB per pair
    spec.imbalance = 3;
    spec.hotRank = 2;
    const Loaded l = load(synth::synthesizeAllToAll(spec));
    const int R = spec.ranks;
    const size_t exchanges = static_cast<size_t>(2 * spec.steps);
    for (int r = 0; r < R; ++r) {
        ASSERT_EQ(l.model->lane(laneOfStream(l, r, 13)).rows[0].size(), exchanges);
        for (size_t k = 0; k < exchanges; ++k) {
            const KernelLinks ls = linkedKernels(*l.model, l.analysis.get(), kth(l, r, 13, k));
            EXPECT_GE(ls.matched, 0);  // an exchange: a group, like a collective
            std::set<std::tuple<int, int, size_t>> got, want;
            for (const EventRef& p : ls.partners) got.insert({p.lane, p.row, p.index});
            for (int o = 0; o < R; ++o)
                if (o != r) {
                    const EventRef e = kth(l, o, 13, k);
                    want.insert({e.lane, e.row, e.index});
                }
            EXPECT_EQ(got, want) << "rank " << r << " exchange " << k;
            ASSERT_EQ(ls.arrows.size(), static_cast<size_t>(R - 1));
            for (const PeerLink& a : ls.arrows) EXPECT_TRUE(a.bothWays);
            EXPECT_EQ(ls.transfers.size(), static_cast<size_t>(2 * (R - 1)));
        }
    }
    // Rank 0's dispatch: it sends H = 12 MiB to the hot rank and gets B = 4 MiB
    // back from it; in the combine the other way round.
    const DetailList dispatch = eventDetails(*l.model, kth(l, 0, 13, 0), l.analysis.get());
    const auto with = valuesOf(dispatch, "exchange with");
    ASSERT_EQ(with.size(), 3u);
    EXPECT_EQ(with[1].rfind("rank 2 · GPU 2, sends 12 MiB, receives 4 MiB", 0), 0u) << with[1];
    EXPECT_EQ(with[0].rfind("rank 1 · GPU 1, sends 4 MiB, receives 4 MiB", 0), 0u) << with[0];
    EXPECT_NE(valueOf(dispatch, "collective").find("all-to-all"), std::string::npos);
    const DetailList combine = eventDetails(*l.model, kth(l, 0, 13, 1), l.analysis.get());
    EXPECT_EQ(valuesOf(combine, "exchange with")[1].rfind("rank 2 · GPU 2, sends 4 MiB, receives 12 MiB", 0), 0u);
}

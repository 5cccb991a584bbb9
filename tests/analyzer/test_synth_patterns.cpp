// The pipeline and all-to-all models against the answers worked out by hand
// in analyzer/synth/README.md: in memory, through capture files, and through
// `overlapscope export` (a PyTorch-profiler-style trace) and back.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/export/chrome_export.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/pattern_synth.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <fstream>

using namespace osc;
using namespace osc::synth;

namespace {

// Every input the analysis can meet the model in: memory, files, and the
// Chrome trace `overlapscope export` writes, read back as a PyTorch trace.
enum class Via { Memory, Files, ChromeTrace };

template <typename Spec, typename Synthesize, typename Write>
Analysis analyzeVia(Via via, const Spec& spec, Synthesize synthesize, Write write, const std::string& name,
                    const AnalysisSettings& settings = {}) {
    if (via == Via::Memory) return analyze(synthesize(spec), settings);
    const testsupport::TempDir tmp;
    const std::string dir = tmp / name;
    write(spec, dir, false);
    Analysis a;
    if (via == Via::Files) {
        a = analyze(loadCapture(dir), settings);
    } else {
        const std::string trace = dir + ".json";
        {
            const Capture capture = loadCapture(dir);
            std::ofstream out(trace);
            writeChromeTrace(capture, out);
        }
        a = analyze(loadCapture(trace), settings);
    }
    return a;
}

const char* viaName(Via v) { return v == Via::Memory ? "memory" : v == Via::Files ? "files" : "chrome trace"; }

bool hasFinding(const std::vector<Finding>& f, FindingKind k) {
    for (const auto& x : f)
        if (x.kind == k) return true;
    return false;
}

}  // namespace

// README "1F1B pipeline", no transfer time: every stage idles (S-1)(tf+tb)
// per step, fill s*tf, drain s*tb; the bubble is the textbook share exactly.
TEST(SynthPipelineModel, TextbookBubbleOnEveryStage) {
    PipelineSpec s;  // 4 stages, 8 micro-batches, 0.5 / 1.0 ms, 3 steps
    const TimeNs tf = s.forwardNs, tb = s.backwardNs, S = s.stages, M = s.microbatches;
    for (Via via : {Via::Memory, Via::Files, Via::ChromeTrace}) {
        SCOPED_TRACE(viaName(via));
        const Analysis a = analyzeVia(via, s, synthesizePipeline, writePipeline, "pp");
        ASSERT_EQ(a.devices.size(), 4u);
        ASSERT_EQ(a.pipeline.size(), 3u);
        for (const auto& p : a.pipeline) {
            EXPECT_EQ(p.stages, 4);
            EXPECT_EQ(p.microbatches, 8);
            EXPECT_EQ(p.end_ns - p.start_ns, (M + S - 1) * (tf + tb));
            ASSERT_TRUE(p.theoretical_bubble_share);
            EXPECT_DOUBLE_EQ(*p.theoretical_bubble_share, 3.0 / 11.0);
            EXPECT_EQ(p.devices, (std::vector<int>{0, 1, 2, 3}));
            EXPECT_EQ(p.slowest, 0);  // all equal: the lowest
        }
        for (int d = 0; d < 4; ++d) {
            const auto& dev = a.devices[static_cast<size_t>(d)];
            ASSERT_EQ(dev.steps.size(), 3u);
            for (const auto& st : dev.steps) {
                ASSERT_TRUE(st.pipeline) << d;
                const auto& m = *st.pipeline;
                EXPECT_EQ(m.stage, d);
                EXPECT_EQ(m.compute_ns, M * (tf + tb));
                EXPECT_EQ(m.bubble_ns, (S - 1) * (tf + tb));
                EXPECT_EQ(m.fill_ns, d * tf);
                EXPECT_EQ(m.drain_ns, d * tb);
                EXPECT_EQ(m.stall_ns, (S - 1 - d) * (tf + tb));
                EXPECT_NEAR(*m.bubble_share, 3.0 / 11.0, 1e-12);
                EXPECT_FALSE(hasFinding(st.bottleneck.findings, FindingKind::PipelineBubble));
            }
            ASSERT_TRUE(dev.pipeline);
            EXPECT_EQ(dev.pipeline->bubble_ns, 3 * (S - 1) * (tf + tb));
            EXPECT_NEAR(*dev.pipeline->bubble_share, 3.0 / 11.0, 1e-12);
            EXPECT_NEAR(*dev.pipeline->theoretical_bubble_share, 3.0 / 11.0, 1e-12);
            // With no transfer time every send and receive only waits for its partner.
            ASSERT_TRUE(dev.wait);
            EXPECT_EQ(dev.wait->exposed_transfer_ns, 0) << d;
            EXPECT_EQ(dev.wait->comm_wait_ns, dev.totals.comm_ns) << d;
        }
        // 2 (S-1) M sends per step, each matched with its receive.
        EXPECT_EQ(a.p2p.size(), 3u * 2 * 3 * 8);
        for (const auto& t : a.p2p) {
            EXPECT_EQ(t.bytes, s.activationBytes);
            EXPECT_EQ(std::abs(t.sender.first - t.receiver.first), 1);
        }
        EXPECT_TRUE(a.matched.empty());
        EXPECT_TRUE(a.alltoall.empty());
        for (const auto& w : a.warnings) EXPECT_EQ(w.find("SendRecv"), std::string::npos) << w;
    }
}

// Merged length of a list of intervals, written here apart from the analyzer.
std::vector<std::pair<TimeNs, TimeNs>> merged(std::vector<std::pair<TimeNs, TimeNs>> v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<TimeNs, TimeNs>> out;
    for (const auto& [a, b] : v) {
        if (b <= a) continue;
        if (!out.empty() && a <= out.back().second)
            out.back().second = std::max(out.back().second, b);
        else
            out.push_back({a, b});
    }
    return out;
}

TimeNs lengthOf(const std::vector<std::pair<TimeNs, TimeNs>>& v) {
    TimeNs n = 0;
    for (const auto& [a, b] : v) n += b - a;
    return n;
}

// |a ∖ b| for merged lists, by walking both.
TimeNs lengthMinus(const std::vector<std::pair<TimeNs, TimeNs>>& a, const std::vector<std::pair<TimeNs, TimeNs>>& b) {
    TimeNs n = 0;
    for (const auto& [s, e] : a) {
        TimeNs cursor = s;
        for (const auto& [bs, be] : b) {
            if (be <= cursor || bs >= e) continue;
            if (bs > cursor) n += bs - cursor;
            cursor = std::max(cursor, be);
        }
        if (cursor < e) n += e - cursor;
    }
    return n;
}

// README: with a transfer time there is no short formula; the bubble and the
// waiting are worked out here from the generated kernels themselves. Every
// handover's send and receive end together, transferNs after the later of
// the two arrived: [start, end - transferNs) waits, the rest moves data.
TEST(SynthPipelineModel, TransferTimeAgainstTheGeneratedKernels) {
    PipelineSpec s;
    s.stages = 3;
    s.microbatches = 5;
    s.steps = 2;
    s.transferNs = 70'000;
    const Capture c = synthesizePipeline(s);
    const Analysis a = analyze(c);
    ASSERT_EQ(a.devices.size(), 3u);
    ASSERT_EQ(a.pipeline.size(), 2u);
    const size_t perStep = 2 * static_cast<size_t>(s.microbatches);
    std::vector<std::vector<std::pair<TimeNs, TimeNs>>> compute(3);
    for (size_t d = 0; d < 3; ++d) {
        const auto& k = c.processes[d].devices[0].kernels;
        std::vector<std::pair<TimeNs, TimeNs>> waiting, moving;
        for (size_t i = 0; i < k.size(); ++i) {
            if (c.strings.at(k.name[i]).rfind("nccl", 0) == 0) {
                waiting.push_back({k.start[i], k.end[i] - s.transferNs});
                moving.push_back({std::max(k.start[i], k.end[i] - s.transferNs), k.end[i]});
            } else {
                compute[d].push_back({k.start[i], k.end[i]});
            }
        }
        std::sort(compute[d].begin(), compute[d].end());
        ASSERT_EQ(compute[d].size(), 2 * perStep);
        ASSERT_TRUE(a.devices[d].wait);
        EXPECT_EQ(a.devices[d].wait->comm_wait_ns, lengthMinus(merged(waiting), merged(moving))) << d;
    }
    for (size_t step = 0; step < 2; ++step) {
        TimeNs lo = INT64_MAX, hi = INT64_MIN;
        for (size_t d = 0; d < 3; ++d)
            for (size_t i = step * perStep; i < (step + 1) * perStep; ++i) {
                lo = std::min(lo, compute[d][i].first);
                hi = std::max(hi, compute[d][i].second);
            }
        EXPECT_EQ(a.pipeline[step].start_ns, lo);
        EXPECT_EQ(a.pipeline[step].end_ns, hi);
        for (size_t d = 0; d < 3; ++d) {
            const std::vector<std::pair<TimeNs, TimeNs>> mine(
                compute[d].begin() + static_cast<std::ptrdiff_t>(step * perStep),
                compute[d].begin() + static_cast<std::ptrdiff_t>((step + 1) * perStep));
            const auto& m = *a.devices[d].steps[step].pipeline;
            EXPECT_EQ(m.bubble_ns, (hi - lo) - lengthOf(merged(mine))) << d;
            EXPECT_EQ(m.fill_ns, mine.front().first - lo) << d;
            EXPECT_EQ(m.drain_ns, hi - mine.back().second) << d;
            // The round trips through later stages stall the steady state: past the theory.
            EXPECT_GT(*m.bubble_share, 2.0 / 7.0) << d;
        }
    }
}

// README: a slow last stage (forward and backward x f) stretches the window
// to M(tf'+tb') + (S-1)(tf+tb); it keeps the textbook bubble, the others idle
// more, beyond the theory: a finding on each of them names the slow stage.
TEST(SynthPipelineModel, SlowLastStageIsFoundAndExceedsTheory) {
    PipelineSpec s;
    s.steps = 2;
    s.slowStage = 3;
    s.slowFactor = 2.0;
    const TimeNs tf = s.forwardNs, tb = s.backwardNs, S = s.stages, M = s.microbatches;
    const TimeNs window = M * 2 * (tf + tb) + (S - 1) * (tf + tb);
    const Analysis a = analyze(synthesizePipeline(s));
    ASSERT_EQ(a.pipeline.size(), 2u);
    for (const auto& p : a.pipeline) {
        EXPECT_EQ(p.end_ns - p.start_ns, window);
        EXPECT_EQ(p.slowest, 3);
    }
    for (int d = 0; d < 4; ++d)
        for (const auto& st : a.devices[static_cast<size_t>(d)].steps) {
            const auto& m = *st.pipeline;
            EXPECT_EQ(m.slowest, d == 3);
            EXPECT_EQ(m.bubble_ns, d == 3 ? (S - 1) * (tf + tb) : window - M * (tf + tb)) << d;
            EXPECT_EQ(hasFinding(st.bottleneck.findings, FindingKind::PipelineBubble), d != 3) << d;
        }
    const auto& f = a.devices[0].steps[0].bottleneck.findings;
    ASSERT_FALSE(f.empty());
    EXPECT_NE(f[0].message.find("slowest stage is rank 3 gpu 3"), std::string::npos) << f[0].message;
    // Exposed beyond the theory: bubble - theory x window.
    EXPECT_EQ(f[0].exposed_ns, window - M * (tf + tb) - std::llround(3.0 / 11.0 * static_cast<double>(window)));
}

// README "imbalanced all-to-all": the hot rank moves 2(R-1)(B+H) per step, a
// cold one 2((2R-3)B+H); bytes imbalance R(1+F)/(2(R-1+F)); each exchange
// of a cold rank takes t_c, of the hot one t_h.
TEST(SynthAllToAllModel, ImbalanceAndOverloadedRank) {
    AllToAllSpec s;
    s.imbalance = 3.0;
    s.hotRank = 1;
    const int R = s.ranks;
    const uint64_t B = s.pairBytes, H = s.hotBytes();
    const TimeNs tc = s.exchangeNs((R - 2) * B + H), th = s.exchangeNs((R - 1) * H);
    for (Via via : {Via::Memory, Via::Files, Via::ChromeTrace}) {
        SCOPED_TRACE(viaName(via));
        const Analysis a = analyzeVia(via, s, synthesizeAllToAll, writeAllToAll, "a2a");
        ASSERT_EQ(a.devices.size(), 4u);
        ASSERT_EQ(a.alltoall.size(), 3u);
        for (const auto& st : a.alltoall) {
            EXPECT_EQ(st.dispatches, 2);
            ASSERT_EQ(st.ranks.size(), 4u);
            for (const auto& r : st.ranks) {
                const bool hot = r.device == 1;
                EXPECT_EQ(r.bytes, hot ? 2 * (R - 1) * (B + H) : 2 * ((2 * R - 3) * B + H)) << r.device;
                EXPECT_EQ(r.time_ns, hot ? 2 * th : 2 * tc) << r.device;
                EXPECT_EQ(r.exposed_ns, hot ? 2 * th : tc + th) << r.device;
            }
            ASSERT_TRUE(st.bytes_imbalance && st.time_imbalance);
            EXPECT_NEAR(*st.bytes_imbalance, R * (1.0 + 3.0) / (2.0 * (R - 1 + 3.0)), 1e-12);
            EXPECT_NEAR(*st.time_imbalance, R * static_cast<double>(th) / ((R - 1) * static_cast<double>(tc) + th),
                        1e-12);
            EXPECT_EQ(st.overloaded, 1);
            ASSERT_EQ(st.pairs.size(), 12u);
            for (const auto& p : st.pairs)
                EXPECT_EQ(p.bytes, p.src == 1 || p.dst == 1 ? H + B : 2 * B) << p.src << "->" << p.dst;
        }
        for (int d = 0; d < 4; ++d) {
            const auto& dev = a.devices[static_cast<size_t>(d)];
            bool found = false;
            for (const auto& st : dev.steps)
                found |= hasFinding(st.bottleneck.findings, FindingKind::AllToAllImbalance);
            EXPECT_EQ(found, d == 1) << d;
            // The combine waits for the hot rank: t_h - t_c per step.
            EXPECT_EQ(dev.last_arrivals, d == 1 ? 3 : 0);
            EXPECT_EQ(dev.delay_caused_ns, d == 1 ? 3 * (th - tc) : 0);
            EXPECT_EQ(dev.wait->comm_wait_ns, d == 1 ? 0 : 3 * (th - tc));
            ASSERT_TRUE(dev.alltoall);
            EXPECT_EQ(dev.alltoall->ops, 6);
        }
        size_t exchanges = 0;
        for (const auto& m : a.matched) exchanges += m.collective == "AllToAll" && m.pointToPoint;
        EXPECT_EQ(exchanges, 6u);
    }
}

// A balanced exchange: imbalance exactly 1 and no finding.
TEST(SynthAllToAllModel, BalancedHasNoFinding) {
    AllToAllSpec s;
    s.steps = 1;
    const Analysis a = analyze(synthesizeAllToAll(s));
    ASSERT_EQ(a.alltoall.size(), 1u);
    EXPECT_DOUBLE_EQ(*a.alltoall[0].bytes_imbalance, 1.0);
    EXPECT_DOUBLE_EQ(*a.alltoall[0].time_imbalance, 1.0);
    for (const auto& d : a.devices)
        for (const auto& st : d.steps) EXPECT_FALSE(hasFinding(st.bottleneck.findings, FindingKind::AllToAllImbalance));
}

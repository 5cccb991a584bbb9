// The pipeline plan of pp_overlap: the GPipe and 1F1B pass orders written
// out by hand, the send/receive groups of small plans worked by hand, every
// send matched by its receive in the same order, no deadlock for any size,
// and bubble counts against (S-1)/(M+S-1).
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "reference_workloads/support/pipeline_schedule.h"

namespace oscwl {
namespace {

std::string passes_text(const std::vector<PipePass>& passes) {
    std::string out;
    for (const PipePass& p : passes)
        out += (out.empty() ? "" : " ") + std::string(p.backward ? "B" : "F") + std::to_string(p.mb);
    return out;
}

std::string actions_text(const StagePlan& plan) {
    std::ostringstream out;
    for (const PipeAction& a : plan.actions) {
        if (!out.str().empty()) out << ' ';
        if (a.is_pass) {
            out << (a.pass.backward ? 'B' : 'F') << a.pass.mb;
            continue;
        }
        out << '{';
        for (std::size_t i = 0; i < a.group.size(); ++i) {
            const PipeP2P& op = a.group[i];
            const char* d = op.data == PipeData::activation ? "a"
                            : op.data == PipeData::gradient ? "g"
                            : op.data == PipeData::input    ? "in"
                            : op.data == PipeData::loss     ? "loss"
                                                            : "drain";
            out << (i ? " " : "") << d << op.mb
                << (op.role == PipeP2P::Role::send   ? ">"
                    : op.role == PipeP2P::Role::recv ? "<"
                                                     : "@")
                << op.peer;
        }
        out << '}';
    }
    return out.str();
}

TEST(PipelineSchedule, OneFOneBFourStagesEightMicrobatches) {
    // Stage s runs S-1-s warm-up forwards, then one forward and one backward
    // at a time, then the backwards left.
    const auto order = [](int s) { return passes_text(stage_passes(PipeSchedule::one_f_one_b, 4, s, 8)); };
    EXPECT_EQ(order(0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
    EXPECT_EQ(order(1), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
    EXPECT_EQ(order(2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
    EXPECT_EQ(order(3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST(PipelineSchedule, GpipeAndShortOneFOneB) {
    EXPECT_EQ(passes_text(stage_passes(PipeSchedule::gpipe, 2, 1, 3)), "F0 F1 F2 B0 B1 B2");
    // Fewer micro-batches than warm-up slots: all forwards, then all backwards.
    EXPECT_EQ(passes_text(stage_passes(PipeSchedule::one_f_one_b, 4, 0, 2)), "F0 F1 B0 B1");
    EXPECT_EQ(passes_text(stage_passes(PipeSchedule::one_f_one_b, 1, 0, 3)), "F0 B0 F1 B1 F2 B2");
    EXPECT_THROW(stage_passes(PipeSchedule::gpipe, 2, 2, 1), std::invalid_argument);
}

TEST(PipelineSchedule, NaiveGroupsTwoStagesTwoMicrobatches) {
    // Sends of a pass fused with the receives of the next pass (Megatron's
    // send_forward_recv_backward): stage 0 sends a1 and receives g0 in one
    // group while stage 1 sends g0 and receives a1 in one group.
    PipelinePlan p = plan_pipeline(PipeSchedule::one_f_one_b, 2, 2, false);
    EXPECT_EQ(actions_text(p.stage[0]), "F0 {a0>1} F1 {a1>1 g0<1} B0 {g1<1} B1");
    EXPECT_EQ(actions_text(p.stage[1]), "{a0<0} F0 B0 {g0>0 a1<0} F1 B1 {g1>0}");
    EXPECT_EQ(p.stage[0].groups(), 3);
    EXPECT_EQ(p.stage[1].groups(), 3);
    EXPECT_EQ(p.stage[0].transfers(), 4);
}

TEST(PipelineSchedule, OverlappedQueueMiddleStageOfThree) {
    // GPipe, 3 stages, 3 micro-batches. Ideal times (F 1, B 2): stage 1 needs
    // a0, a1, a2 at 1, 2, 3 and g0, g1, g2 at 7, 9, 11; stage 2 needs a0, a1,
    // a2 at 2, 3, 4; stage 0 needs g0, g1, g2 at 9, 11, 13. Stage 1's queue in
    // that order (later micro-batch first on ties): a0< a1< a0> a2< a1> a2>
    // g0< g1< g0> g2< g1> g2>; a send takes the receive behind it. The
    // receive of a(m+1) goes out before F(m), a send never waits in front of
    // a pass.
    PipelinePlan p = plan_pipeline(PipeSchedule::gpipe, 3, 3, true);
    EXPECT_EQ(actions_text(p.stage[1]),
              "{a0<0} {a1<0} F0 {a0>2 a2<0} F1 {a1>2} F2 {a2>2 g0<2} {g1<2} B0 {g0>0 g2<2} B1 {g1>0} B2 {g2>0}");
    // F1 waits only for {a1<0}; {a0>2 a2<0} waits for F0.
    EXPECT_EQ(p.stage[1].actions[4].waits, (std::vector<int>{1}));
    EXPECT_EQ(p.stage[1].actions[3].waits, (std::vector<int>{2}));
    EXPECT_EQ(p.stage[1].groups(), 9);
    EXPECT_EQ(p.stage[1].transfers(), 12);
    // The blocking plan of the same stage: sends fused with the next pass's receives.
    EXPECT_EQ(actions_text(plan_pipeline(PipeSchedule::gpipe, 3, 3, false).stage[1]),
              "{a0<0} F0 {a0>2 a1<0} F1 {a1>2 a2<0} F2 {a2>2 g0<2} B0 {g0>0 g1<2} B1 {g1>0 g2<2} B2 {g2>0}");
}

TEST(PipelineSchedule, OneStageLoopsBackItsTransfers) {
    PipelinePlan naive = plan_pipeline(PipeSchedule::gpipe, 1, 2, false);
    EXPECT_EQ(actions_text(naive.stage[0]), "{in0@0} F0 {loss0@0 in1@0} F1 {loss1@0} B0 {drain0@0} B1 {drain1@0}");
    PipelinePlan over = plan_pipeline(PipeSchedule::one_f_one_b, 1, 2, true);
    // The next input goes out while the pass before its forward computes.
    // Needed at F0 (0), B0 (1), F1 (3), B1 (4); the drains after B0 (3) and
    // B1 (6). in1 is posted while B0 computes.
    EXPECT_EQ(actions_text(over.stage[0]), "{in0@0} F0 {loss0@0} {in1@0} B0 {drain0@0} F1 {loss1@0} B1 {drain1@0}");
    EXPECT_EQ(over.stage[0].transfers(), 6);
}

// Sends from a stage to a peer must meet that peer's receives from it in the
// same order (NCCL matches them so); and every transfer appears once.
void expect_matching(const PipelinePlan& plan) {
    std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> sent, received;  // (from, to) -> (data, mb)
    for (int s = 0; s < plan.stages; ++s)
        for (const PipeAction& a : plan.stage[static_cast<std::size_t>(s)].actions)
            for (const PipeP2P& op : a.group) {
                if (op.role == PipeP2P::Role::send) sent[{s, op.peer}].push_back({static_cast<int>(op.data), op.mb});
                if (op.role == PipeP2P::Role::recv)
                    received[{op.peer, s}].push_back({static_cast<int>(op.data), op.mb});
                if (op.role == PipeP2P::Role::loopback) {
                    EXPECT_EQ(op.peer, s);
                }
            }
    EXPECT_EQ(sent, received);
    std::size_t total = 0;
    for (const auto& [pair, list] : sent) {
        EXPECT_EQ(std::abs(pair.first - pair.second), 1) << "only neighbours exchange";
        total += list.size();
    }
    EXPECT_EQ(total, plan.stages > 1 ? static_cast<std::size_t>(2 * (plan.stages - 1) * plan.microbatches) : 0u);
}

TEST(PipelineSchedule, EverySendMeetsItsReceiveAndNothingDeadlocks) {
    for (PipeSchedule sched : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b})
        for (bool overlap : {false, true})
            for (int stages = 1; stages <= 6; ++stages)
                for (int mbs = 1; mbs <= 10; ++mbs) {
                    PipelinePlan plan = plan_pipeline(sched, stages, mbs, overlap);
                    SCOPED_TRACE(std::string(to_string(sched)) + (overlap ? " overlap" : " naive") +
                                 " S=" + std::to_string(stages) + " M=" + std::to_string(mbs));
                    expect_matching(plan);
                    for (double p2p : {0.0, 0.3, 1.0, 5.0})
                        EXPECT_FALSE(simulate_pipeline(plan, 1, 2, p2p).deadlock) << "p2p " << p2p;
                }
}

TEST(PipelineSchedule, FreeCommunicationGivesTheTheoreticalBubble) {
    for (PipeSchedule sched : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b})
        for (int stages = 1; stages <= 6; ++stages)
            for (int mbs = 1; mbs <= 10; ++mbs) {
                const PipelineTimeline t = simulate_pipeline(plan_pipeline(sched, stages, mbs, true), 1, 2, 0);
                SCOPED_TRACE(std::string(to_string(sched)) + " S=" + std::to_string(stages) +
                             " M=" + std::to_string(mbs));
                ASSERT_FALSE(t.deadlock);
                EXPECT_DOUBLE_EQ(t.makespan, 3.0 * (mbs + stages - 1));
                for (double busy : t.busy) {
                    EXPECT_DOUBLE_EQ(busy, 3.0 * mbs);
                    EXPECT_NEAR((t.makespan - busy) / t.makespan, pipeline_bubble_fraction(stages, mbs), 1e-12);
                }
            }
}

TEST(PipelineSchedule, HandCountedBubbleFourStagesEightMicrobatches) {
    // Unit passes: 16 per stage, the pipeline takes 8 + 3 forward and 8 + 3
    // backward slots = 22, so each stage idles 6 of 22 = 3/11 = (S-1)/(M+S-1).
    EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(4, 8), 3.0 / 11.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(2, 8), 1.0 / 9.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(1, 8), 0.0);
    for (PipeSchedule sched : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b}) {
        const PipelineTimeline t = simulate_pipeline(plan_pipeline(sched, 4, 8, true), 1, 1, 0);
        EXPECT_DOUBLE_EQ(t.makespan, 22.0) << to_string(sched);
        for (double busy : t.busy) EXPECT_DOUBLE_EQ(busy, 16.0);
        // The last stage starts after 3 forwards upstream; stage 0 ends 3 backwards after the last stage.
        EXPECT_DOUBLE_EQ(t.pass_times[3].front().first, 3.0);
        EXPECT_DOUBLE_EQ(t.pass_times[0].back().second, 22.0);
    }
}

TEST(PipelineSchedule, BlockingTransfersCostMoreThanQueuedOnes) {
    for (PipeSchedule sched : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b})
        for (int stages = 2; stages <= 5; ++stages)
            for (int mbs : {1, 4, 8}) {
                const double naive = simulate_pipeline(plan_pipeline(sched, stages, mbs, false), 1, 2, 0.5).makespan;
                const double over = simulate_pipeline(plan_pipeline(sched, stages, mbs, true), 1, 2, 0.5).makespan;
                EXPECT_LE(over, naive) << to_string(sched) << " S=" << stages << " M=" << mbs;
            }
    // GPipe, 2 stages, 8 micro-batches: queued receives hide the transfers of
    // the stages' forward and backward runs; blocking ones add up.
    const double naive = simulate_pipeline(plan_pipeline(PipeSchedule::gpipe, 2, 8, false), 1, 2, 0.5).makespan;
    const double over = simulate_pipeline(plan_pipeline(PipeSchedule::gpipe, 2, 8, true), 1, 2, 0.5).makespan;
    EXPECT_LT(over, naive);
}

TEST(PipelineSchedule, OneFOneBKeepsFewerMicrobatchesInFlight) {
    for (int stages = 1; stages <= 5; ++stages)
        for (int s = 0; s < stages; ++s) {
            auto in_flight = [&](PipeSchedule sched) {
                int live = 0, most = 0;
                for (const PipePass& p : stage_passes(sched, stages, s, 8))
                    most = std::max(most, live += p.backward ? -1 : 1);
                return most;
            };
            EXPECT_EQ(in_flight(PipeSchedule::gpipe), 8);
            EXPECT_EQ(in_flight(PipeSchedule::one_f_one_b), std::min(stages - s, 8));
        }
}

}  // namespace
}  // namespace oscwl

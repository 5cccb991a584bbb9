// The live pipeline's step half without a process: rows of the paced fake
// job, handed over out of order as CUPTI's buffers would, go through the
// step assembler; every closed step's metrics (the analyzer's, through
// measureStep) must equal the brute force over all the rows, memory must
// stay bounded over thousands of steps, and a step capture's file must
// give the same figures when read back.
#include "agent/live/step_assembler.h"
#include "agent/live/step_capture.h"
#include "agent/live/step_metrics.h"
#include "agent/live/step_ring.h"
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/live_feed.h"

#include <gtest/gtest.h>

#include <map>

namespace osc::agent::live {
namespace {

using test::BruteRows;
using test::BruteStep;
using test::LiveFeed;

constexpr int64_t kMs = 1'000'000;

std::regex stepPattern() { return std::regex(AnalysisSettings{}.stepPattern); }

PacedTrainingOptions twoDevices() {
    PacedTrainingOptions o;
    o.stepNs = 20 * kMs;
    o.devices = 2;
    o.deviceSkewNs = 1 * kMs;  // device 0 waits for device 1's first all-reduce
    o.collectiveBytes = 1 << 20;
    o.computeKernels = 5;
    o.commKernels = 3;
    o.gpuLagNs = 7 * kMs;
    return o;
}

void expectBrute(const DeviceStepMetrics& m, const BruteStep& b, const std::string& where) {
    EXPECT_EQ(m.metrics.window_ns, b.window) << where;
    EXPECT_EQ(m.metrics.compute_ns, b.compute) << where;
    EXPECT_EQ(m.metrics.comm_ns, b.comm) << where;
    EXPECT_EQ(m.metrics.overlap_ns, b.overlap) << where;
    EXPECT_EQ(m.metrics.exposed_comm_ns, b.exposed) << where;
    EXPECT_EQ(m.metrics.idle_ns, b.idle) << where;
    if (b.wait >= 0) {
        ASSERT_TRUE(m.wait.has_value()) << where;
        EXPECT_EQ(m.wait->comm_wait_ns, b.wait) << where;
    } else {
        EXPECT_FALSE(m.wait.has_value()) << where;
    }
    EXPECT_EQ(m.bytes, b.bytes) << where;
    EXPECT_DOUBLE_EQ(m.busBytes, b.busBytes) << where;
    EXPECT_EQ(m.transferNs, b.transfer) << where;
}

const DeviceStepMetrics* onDevice(const std::vector<DeviceStepMetrics>& step, uint32_t device) {
    for (const auto& m : step)
        if (m.device == device) return &m;
    return nullptr;
}

TEST(LiveSteps, EveryStepEqualsTheBruteForceWhateverTheArrivalOrder) {
    for (uint32_t seed : {1u, 2u, 3u}) {
        LiveFeed feed;
        feed.add(twoDevices(), 100, 40, 30 * kMs, seed);
        StepAssembler assembler(stepPattern());
        std::map<int64_t, std::vector<DeviceStepMetrics>> got;
        int incomplete = 0;
        const auto handler = [&](const ClosedStep& s) {
            incomplete += s.complete ? 0 : 1;
            got[s.number] = measureStep(s, {});
        };
        feed.play(assembler, 10 * kMs, [&](int64_t now) { assembler.advance(now, handler); });
        assembler.finish(handler);
        EXPECT_EQ(incomplete, 0);
        EXPECT_EQ(assembler.counters().rowsLate, 0u);
        ASSERT_EQ(got.size(), 40u) << "seed " << seed;
        for (const auto& step : feed.brute.steps) {
            for (uint32_t d : {0u, 1u}) {
                const std::string where = "seed " + std::to_string(seed) + " step " + std::to_string(step.number) +
                                          " device " + std::to_string(d);
                const DeviceStepMetrics* m = onDevice(got[step.number], d);
                ASSERT_NE(m, nullptr) << where;
                expectBrute(*m, test::bruteStep(feed.brute, step, d), where);
            }
        }
        // The figures are not all zero: the checks above compared something.
        const auto& any = *onDevice(got[110], 0);
        EXPECT_GT(any.metrics.overlap_ns, 0);
        EXPECT_GT(any.metrics.exposed_comm_ns, 0);
        EXPECT_GT(any.wait->comm_wait_ns, 0);
        EXPECT_GT(any.bytes, 0u);
    }
}

// The assembler keeps correlation ids in a window of recent ids and the
// closing step's as a bitmap from the lowest: ids that wrap past 2^32 (a
// job of days) or lie far apart (the sorted-list fallback) must give the
// same steps.
TEST(LiveSteps, CorrelationIdsThatWrapOrLieFarApartGiveTheSameSteps) {
    struct Case {
        uint32_t first, stride;
    };
    for (const Case c : {Case{UINT32_MAX - 60, 1}, Case{5, (1u << 18) + 1}}) {
        LiveFeed feed;
        feed.nextCorrelation = c.first;
        feed.correlationStride = c.stride;
        feed.add(twoDevices(), 100, 12, 30 * kMs, 4);
        if (c.stride == 1) {
            ASSERT_LT(feed.nextCorrelation, c.first);  // it wrapped: the ids went past 2^32
        }
        StepAssembler assembler(stepPattern());
        std::map<int64_t, std::vector<DeviceStepMetrics>> got;
        int incomplete = 0;
        const auto handler = [&](const ClosedStep& s) {
            incomplete += s.complete ? 0 : 1;
            got[s.number] = measureStep(s, {});
        };
        feed.play(assembler, 10 * kMs, [&](int64_t now) { assembler.advance(now, handler); });
        assembler.finish(handler);
        const std::string which = "first id " + std::to_string(c.first) + " stride " + std::to_string(c.stride);
        EXPECT_EQ(incomplete, 0) << which;
        ASSERT_EQ(got.size(), 12u) << which;
        for (const auto& step : feed.brute.steps)
            for (uint32_t d : {0u, 1u}) {
                const std::string where =
                    which + " step " + std::to_string(step.number) + " device " + std::to_string(d);
                const DeviceStepMetrics* m = onDevice(got[step.number], d);
                ASSERT_NE(m, nullptr) << where;
                expectBrute(*m, test::bruteStep(feed.brute, step, d), where);
            }
    }
}

TEST(LiveSteps, ALostKernelRecordClosesItsStepIncompleteAfterTheWait) {
    LiveFeed feed;
    feed.add(twoDevices(), 100, 20, 5 * kMs, 4, /*dropKernelOfStep=*/110);
    AssemblerLimits limits;
    limits.gpuWaitNs = 100 * kMs;
    StepAssembler assembler(stepPattern(), limits);
    std::map<int64_t, bool> complete;
    int64_t closedAt = -1, now = 0;
    const auto handler = [&](const ClosedStep& s) {
        complete[s.number] = s.complete;
        if (s.number == 110) closedAt = now;
    };
    feed.play(assembler, 10 * kMs, [&](int64_t t) {
        now = t;
        assembler.advance(t, handler);
    });
    ASSERT_TRUE(complete.count(110));
    EXPECT_FALSE(complete[110]);
    for (const auto& [n, ok] : complete) EXPECT_TRUE(ok || n == 110) << n;
    // Held back by the missing record until the wait ran out, then closed:
    // its range ended at 110 * 20 ms + 19 ms, the next at + 20 ms.
    EXPECT_GE(closedAt, 111 * 20 * kMs + 19 * kMs + 100 * kMs);
    EXPECT_EQ(assembler.counters().stepsIncomplete, 1u);
}

TEST(LiveSteps, MemoryStaysBoundedOverThousandsOfSteps) {
    LiveFeed feed;
    feed.add(twoDevices(), 100, 3000, 15 * kMs, 5);
    StepAssembler assembler(stepPattern());
    size_t maxHeld = 0, maxOpen = 0, closed = 0;
    feed.play(assembler, 10 * kMs, [&](int64_t now) {
        assembler.advance(now, [&](const ClosedStep&) { ++closed; });
        maxHeld = std::max(maxHeld, assembler.heldRows());
        maxOpen = std::max(maxOpen, assembler.openSteps());
    });
    // A step is 2 x 8 launches, their kernels, 6 NCCL rows and a range (about
    // 40 rows); what is held is a few steps in flight, not 3,000.
    EXPECT_LE(maxHeld, 400u);
    EXPECT_LE(maxOpen, 4u);
    EXPECT_GE(closed, 2990u);
}

TEST(LiveSteps, WithoutStepRangesRowsAreKeptOnlyAWhile) {
    PacedTrainingOptions o = twoDevices();
    o.stepNs = 1000 * kMs;
    LiveFeed feed;
    feed.add(o, 10, 300, 50 * kMs, 6);  // 300 s of a job whose ranges the pattern does not match
    StepAssembler assembler(std::regex("^nothing$"));
    size_t maxHeld = 0;
    feed.play(assembler, 100 * kMs, [&](int64_t now) {
        assembler.advance(now, {});
        maxHeld = std::max(maxHeld, assembler.heldRows());
    });
    EXPECT_FALSE(assembler.sawSteps());
    EXPECT_GT(assembler.rowsSeen(), 10000u);
    EXPECT_EQ(assembler.counters().stepsClosed, 0u);
    // About 60 s of rows (keepOutsideStepsNs), 40 a second.
    EXPECT_LE(maxHeld, 62u * 45u);
}

TEST(LiveSteps, AStepCaptureHoldsExactlyItsStepsAndReadsBackWithTheLiveFigures) {
    test::TempDir dir;
    LiveFeed feed;
    feed.add(twoDevices(), 100, 30, 25 * kMs, 7);
    StepAssembler assembler(stepPattern());
    ProcessIdentity who;
    who.host = "h";
    who.pid = 42;
    who.rank = 3;
    DecodeContext stream;
    stream.originUtcNs = 1'700'000'000'000'000'000;
    stream.globalPid = 42ull << 24;
    StepCapturePlan plan;
    plan.steps = 4;
    plan.atStep = 105;
    plan.path = dir / "steps.sqlite";
    plan.trigger = "attach";
    StepCapture capture(plan, who, stream, {});
    std::map<int64_t, std::vector<DeviceStepMetrics>> live;
    const auto describe = [&](RowSink& out) { assembler.writeDescriptions(out); };
    RecordedStep record;
    const auto handler = [&](const ClosedStep& s) {
        live[s.number] = measureStep(s, {});
        s.record(record);
        capture.offer(record, describe);
    };
    feed.play(assembler, 10 * kMs, [&](int64_t now) { assembler.advance(now, handler); });
    assembler.finish(handler);
    ASSERT_EQ(capture.progress().state, "done") << capture.progress().error;
    EXPECT_EQ(capture.progress().first, 105);
    EXPECT_EQ(capture.progress().written, 4);

    const Capture cap = loadCapture(plan.path);
    const BruteRows rows = test::bruteRowsOf(cap);
    ASSERT_EQ(rows.steps.size(), 4u);
    for (size_t i = 0; i < rows.steps.size(); ++i) EXPECT_EQ(rows.steps[i].number, 105 + static_cast<int64_t>(i));
    const Analysis report = analyze(cap);
    for (const DeviceAnalysis& d : report.devices) {
        ASSERT_EQ(d.steps.size(), 4u);
        for (const StepAnalysis& s : d.steps) {
            const int64_t n = stepNumberOf(s.name);
            const DeviceStepMetrics* m = onDevice(live[n], d.device);
            ASSERT_NE(m, nullptr);
            const std::string where = "step " + std::to_string(n) + " device " + std::to_string(d.device);
            // The file's report gives the step what the live metrics gave it...
            EXPECT_EQ(s.metrics.window_ns, m->metrics.window_ns) << where;
            EXPECT_EQ(s.metrics.exposed_comm_ns, m->metrics.exposed_comm_ns) << where;
            EXPECT_EQ(s.metrics.overlap_ns, m->metrics.overlap_ns) << where;
            ASSERT_TRUE(s.wait.has_value()) << where;
            EXPECT_EQ(s.wait->comm_wait_ns, m->wait->comm_wait_ns) << where;
            // ...and so does the brute force over the file's own rows.
            for (const auto& step : rows.steps)
                if (step.number == n) expectBrute(*m, test::bruteStep(rows, step, d.device), where + " (file)");
        }
    }
    EXPECT_EQ(cap.processes[0].meta.at("step_capture_first_step"), "105");
    EXPECT_EQ(cap.processes[0].meta.at("step_capture_steps_written"), "4");
    EXPECT_EQ(cap.processes[0].meta.at("end_reason"), "stopped");
}

TEST(LiveSteps, AStepThatHasPassedOrBeganBeforeRecordingFailsTheCapture) {
    test::TempDir dir;
    LiveFeed feed;
    feed.add(twoDevices(), 100, 10, 5 * kMs, 8);
    StepAssembler assembler(stepPattern());
    StepCapturePlan plan;
    plan.steps = 2;
    plan.atStep = 50;  // the stream's first step is 100
    plan.path = dir / "never.sqlite";
    StepCapture capture(plan, ProcessIdentity{}, DecodeContext{}, {});
    RecordedStep record;
    const auto handler = [&](const ClosedStep& s) {
        s.record(record);
        capture.offer(record, {});
    };
    feed.play(assembler, 10 * kMs, [&](int64_t now) { assembler.advance(now, handler); });
    EXPECT_EQ(capture.progress().state, "failed");
    EXPECT_NE(capture.progress().error.find("step 50 was not seen"), std::string::npos) << capture.progress().error;
    EXPECT_TRUE(test::filesIn(dir.path()).empty());

    // A step that began before the stream's time 0 is not held whole.
    plan.atStep = 100;
    plan.path = dir / "late.sqlite";
    StepCapture late(plan, ProcessIdentity{}, DecodeContext{}, {});
    RecordedStep step;
    step.name = "ProfilerStep#100";
    step.number = 100;
    step.rangeStart = -kMs;
    step.rangeEnd = 19 * kMs;
    EXPECT_TRUE(late.offer(step, {}));
    EXPECT_EQ(late.progress().state, "failed");
    EXPECT_NE(late.progress().error.find("began before this agent was recording"), std::string::npos)
        << late.progress().error;
    EXPECT_TRUE(test::filesIn(dir.path()).empty());
}

// The look-back ring (issue 41): at most K steps and at most its rows, the
// newest always; a capture of steps that have closed already is written from
// it, and gives them the figures the live metrics gave them.
TEST(LiveSteps, TheLookbackRingHoldsTheLastStepsAndACaptureCanBeginInIt) {
    test::TempDir dir;
    LiveFeed feed;
    feed.add(twoDevices(), 100, 12, 25 * kMs, 7);
    StepAssembler assembler(stepPattern());
    assembler.setRetaining(true);
    StepRing ring(3, 1'000'000);
    std::map<int64_t, std::vector<DeviceStepMetrics>> live;
    std::unique_ptr<StepCapture> capture;
    const auto describe = [&](RowSink& out) { assembler.writeDescriptions(out); };
    size_t mostHeld = 0;
    RecordedStep copied;
    const auto handler = [&](const ClosedStep& s) {
        live[s.number] = measureStep(s, {});
        s.recordRows(ring.next());
        const StepRows& kept = ring.keep();
        assembler.releaseBefore(ring.lowest(assembler.endSeqs()));
        mostHeld = std::max(mostHeld, ring.steps().size());
        assembler.materialize(kept, copied);
        if (capture) capture->offer(copied, describe);
        // Once step 108 has closed, a capture of 106 to 109: three from the ring.
        if (s.number == 108 && !capture) {
            StepCapturePlan plan;
            plan.steps = 4;
            plan.atStep = 106;
            plan.path = dir / "back.sqlite";
            capture = std::make_unique<StepCapture>(plan, ProcessIdentity{}, DecodeContext{},
                                                    std::map<std::string, std::string>{});
            for (const StepRows& held : ring.steps())
                if (held.number >= 106) {
                    assembler.materialize(held, copied);
                    capture->offer(copied, describe);
                }
        }
    };
    feed.play(assembler, 10 * kMs, [&](int64_t now) { assembler.advance(now, handler); });
    assembler.finish(handler);
    EXPECT_EQ(mostHeld, 3u);
    ASSERT_EQ(ring.steps().size(), 3u);
    EXPECT_EQ(ring.steps().front().number, 109);
    EXPECT_EQ(ring.steps().back().number, 111);
    ASSERT_TRUE(capture);
    ASSERT_EQ(capture->progress().state, "done") << capture->progress().error;
    const Capture cap = loadCapture(dir / "back.sqlite");
    const BruteRows rows = test::bruteRowsOf(cap);
    ASSERT_EQ(rows.steps.size(), 4u);
    for (const auto& step : rows.steps)
        for (uint32_t d = 0; d < 2; ++d) {
            const DeviceStepMetrics* m = onDevice(live.at(step.number), d);
            ASSERT_NE(m, nullptr);
            expectBrute(*m, test::bruteStep(rows, step, d), "step " + std::to_string(step.number));
        }
    // The row bound: the oldest steps go first, the newest stays.
    StepRing small(10, 1);
    for (int i = 0; i < 3; ++i) {
        StepRows& r = small.next();
        r.number = i;
        r.kernels.resize(5);
        small.keep();
    }
    ASSERT_EQ(small.steps().size(), 1u);
    EXPECT_EQ(small.steps().front().number, 2);
    EXPECT_EQ(small.rows(), 6u);
}

}  // namespace
}  // namespace osc::agent::live

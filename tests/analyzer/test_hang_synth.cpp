// `overlapscope hang` against known answers: synthetic jobs with a stalled
// rank or a desynced call (synth --stall-rank / --desync-rank), random in
// size, mode, skew and clock offsets, read in every input format the command
// takes; and the worked example of docs/design.md section 4d.
#include "analyzer/hang/hang_output.h"
#include "analyzer/hang/host_activity.h"
#include "analyzer/report/report_format.h"
#include "tests/analyzer/hang_inputs.h"
#include "tests/analyzer/random_job.h"
#include "tests/support/stalled_job.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>

#include <random>

namespace osc {
namespace {

using test::HangFormat;

using testsupport::stalledJob;

TEST(HangSynth, AStalledRankInEveryFormat) {
    const synth::WorkloadSpec spec = stalledJob();
    ASSERT_EQ(spec.collectivesPerStep(), 2);  // 6 layers of 8 MiB in 25 MiB buckets
    testsupport::TempDir dir;
    for (HangFormat f : test::kHangFormats) {
        SCOPED_TRACE(test::toString(f));
        const hang::HangAnalysis a = test::analyzeAs(f, spec, dir / test::toString(f));
        EXPECT_EQ(test::compareHang(a, test::knownAnswer(f, spec)), "");
        ASSERT_EQ(a.stuck.size(), 1u);
        if (f != HangFormat::FlightRecorder) {
            // The others waited from their call until the capture stopped, 5 s after the last arrived.
            const auto& hung = *a.hung[static_cast<size_t>(a.firstMissingCommunicator)];
            EXPECT_GE(hung.waitedNs, spec.stallTailNs);
            EXPECT_LT(hung.waitedNs, spec.stallTailNs + 50'000'000);
            // The stuck rank's host stopped after launching its last backward kernel.
            const auto& r = a.communicators[0].ranks[static_cast<size_t>(a.stuck[0].member)];
            ASSERT_TRUE(r.host.apiCall);
            EXPECT_EQ(r.host.apiCall->name, "cudaLaunchKernel_v7000");
            EXPECT_EQ(r.unfinishedLaunches, 0u);
            EXPECT_EQ(a.communicators[0].ranks[0].unfinishedLaunches, 1u);
        }
    }
}

TEST(HangSynth, ADesyncedCallInEveryFormat) {
    synth::WorkloadSpec spec = stalledJob();
    spec.stallRank = spec.stallAtStep = -1;
    spec.desyncRank = 1;
    spec.desyncAtStep = 3;
    const uint64_t bucket = synth::planBuckets(spec)[0].bytes;  // the step's first collective
    testsupport::TempDir dir;
    for (HangFormat f : test::kHangFormats) {
        SCOPED_TRACE(test::toString(f));
        const hang::HangAnalysis a = test::analyzeAs(f, spec, dir / test::toString(f));
        EXPECT_EQ(test::compareHang(a, test::knownAnswer(f, spec)), "");
        if (a.desyncs.empty()) continue;
        const auto& d = a.desyncs[0];
        ASSERT_EQ(d.parts.size(), 4u);
        for (const auto& part : d.parts) {
            const int rank = a.communicators[0].ranks[static_cast<size_t>(part.member)].rank;
            EXPECT_EQ(*part.bytes, (rank == 1 ? 2u : 1u) * bucket) << rank;
        }
    }
}

TEST(HangSynth, AHealthyJobIsHealthy) {
    synth::WorkloadSpec spec = stalledJob();
    spec.stallRank = spec.stallAtStep = -1;
    testsupport::TempDir dir;
    for (HangFormat f : test::kHangFormats) {
        SCOPED_TRACE(test::toString(f));
        const hang::HangAnalysis a = test::analyzeAs(f, spec, dir / test::toString(f));
        EXPECT_EQ(test::compareHang(a, test::knownAnswer(f, spec)), "");
    }
}

// The verdict in one line (the GUI's banner): the paragraph's first sentence.
TEST(HangSynth, TheHeadlineIsTheParagraphsFirstSentence) {
    synth::WorkloadSpec spec = stalledJob();
    Capture stalled = synth::synthesizeWorkload(spec);
    hang::HangAnalysis a = hang::analyzeHang(&stalled, {});
    std::string headline = hang::hangHeadline(a);
    EXPECT_EQ(headline.rfind("HANG: rank 2 never entered AllReduce #4 of 0x", 0), 0u) << headline;
    EXPECT_NE(headline.find("which ranks 0, 1 and 3 have waited in since"), std::string::npos) << headline;
    EXPECT_EQ(hang::hangParagraph(a).rfind(headline + " ", 0), 0u);
    EXPECT_EQ(headline.back(), '.');
    EXPECT_EQ(headline.find(". "), std::string::npos) << headline;

    spec.stallRank = spec.stallAtStep = -1;
    spec.desyncRank = 1;
    spec.desyncAtStep = 3;  // 2 collectives a step: AllReduce #6
    Capture desynced = synth::synthesizeWorkload(spec);
    a = hang::analyzeHang(&desynced, {});
    headline = hang::hangHeadline(a);
    EXPECT_EQ(headline.rfind("DESYNC: AllReduce #6 of 0x", 0), 0u) << headline;
    const uint64_t bucket = synth::planBuckets(spec)[0].bytes;
    EXPECT_NE(headline.find(": different sizes: ranks 0, 2 and 3 with " + report::formatBytes(bucket) +
                            " and rank 1 with " + report::formatBytes(2 * bucket) + "."),
              std::string::npos)
        << headline;
    EXPECT_EQ(hang::hangParagraph(a).rfind(headline + " ", 0), 0u);

    spec.desyncRank = spec.desyncAtStep = -1;
    Capture healthy = synth::synthesizeWorkload(spec);
    a = hang::analyzeHang(&healthy, {});
    EXPECT_EQ(hang::hangHeadline(a),
              "HEALTHY: no rank is missing from a collective the others wait in, and no two ranks made the same call "
              "differently.");
    EXPECT_EQ(hang::hangParagraph(a).rfind(hang::hangHeadline(a), 0), 0u);
}

// Random jobs: ranks, layers, steps, modes, jitter, arrival skew and clock
// offsets (random_job.h), with a stall, a desync, both, or neither.
TEST(HangSynth, RandomJobsInEveryFormat) {
    std::mt19937 rng(20260517);
    testsupport::TempDir dir;
    for (int trial = 0; trial < 12; ++trial) {
        synth::WorkloadSpec spec = test::randomJob(rng);
        spec.steps = std::uniform_int_distribution<int>(1, 4)(rng);
        const int kind = trial % 4;                           // 0 healthy, 1 stall, 2 desync, 3 both
        if (kind == 3) spec.steps = std::max(spec.steps, 2);  // a desync before the stall
        if (kind == 1 || kind == 3) {
            spec.stallRank = std::uniform_int_distribution<int>(0, spec.ranks - 1)(rng);
            spec.stallAtStep = std::uniform_int_distribution<int>(kind == 3 ? 1 : 0, spec.steps - 1)(rng);
        }
        if (kind >= 2) {
            spec.desyncRank = std::uniform_int_distribution<int>(0, spec.ranks - 1)(rng);
            spec.desyncAtStep =
                std::uniform_int_distribution<int>(0, (kind == 3 ? spec.stallAtStep : spec.steps) - 1)(rng);
        }
        for (HangFormat f : test::kHangFormats) {
            SCOPED_TRACE("trial " + std::to_string(trial) + ", " + test::toString(f) + ", " +
                         std::to_string(spec.ranks) + " ranks, mode " + synth::toString(spec.mode));
            const hang::HangAnalysis a =
                test::analyzeAs(f, spec, dir / ("t" + std::to_string(trial) + "_" + test::toString(f)));
            EXPECT_EQ(test::compareHang(a, test::knownAnswer(f, spec)), "");
        }
    }
}

// docs/design.md 4d's example as NCCL plugin rows: four ranks; ranks 0-2
// entered AllReduce #17 and never completed it, rank 3's last is #16.
TEST(HangSequences, TheDesignExample) {
    hang::JobSequences job;
    job.endKnown = true;
    job.endNs = 10'000'000'000;
    hang::CommunicatorProgress comm;
    comm.id = "0xabc";
    comm.size = 4;
    for (int r = 0; r < 4; ++r) {
        hang::RankProgress rank;
        rank.rank = rank.commRank = r;
        for (uint64_t s = 0; s <= (r == 3 ? 16u : 17u); ++s) {
            hang::Call c;
            c.slot = {"AllReduce", s};
            c.collective = "AllReduce";
            c.enteredNs = static_cast<TimeNs>(s) * 1'000'000;
            c.completed = s < 17;
            rank.calls.push_back(c);
        }
        comm.ranks.push_back(rank);
    }
    job.communicators.push_back(comm);
    const hang::HangAnalysis a = hang::analyzeSequences(job);
    EXPECT_EQ(a.verdict, hang::Verdict::Hang);
    ASSERT_EQ(a.stuck.size(), 1u);
    EXPECT_EQ(a.stuck[0].rank, 3);
    EXPECT_EQ(a.hung[0]->slot.seq, 17u);
    EXPECT_EQ(a.hung[0]->waitedNs, 10'000'000'000 - 17'000'000);

    // Rank 3 entered #17 too, as an AllGather: with one number per type
    // that is AllGather #0, where the others never were; rank 3 is stuck
    // (it never entered AllReduce #17) and waits elsewhere.
    job.communicators[0].ranks[3].calls.push_back({{"AllGather", 0}, "AllGather", "", {}, "", 17'000'000, false});
    const hang::HangAnalysis b = hang::analyzeSequences(job);
    ASSERT_EQ(b.stuck.size(), 1u);
    ASSERT_TRUE(b.stuck[0].waitingIn);
    EXPECT_EQ(b.stuck[0].waitingIn->collective, "AllGather");

    // In flight for less than --min-wait-ms: not hung.
    hang::HangSettings settings;
    settings.minWaitNs = 10'000'000'000;
    EXPECT_EQ(hang::analyzeSequences(job, settings).verdict, hang::Verdict::Healthy);
}

// What a stuck rank's host was last doing, worked by hand: the newest of
// each kind by start (ties: the later end); marks, GPU-side annotations and
// NCCL's own ranges are not what the host was doing; last seen is the
// latest end of any record of those kinds, newest or not.
TEST(HangSequences, HostActivityIsTheNewestOfEachKind) {
    Capture cap;
    Process p;
    auto api = [&](std::string_view name, TimeNs start, TimeNs end) {
        p.apiCalls.start.push_back(start);
        p.apiCalls.end.push_back(end);
        p.apiCalls.globalTid.push_back(1);
        p.apiCalls.correlation.push_back(static_cast<uint32_t>(p.apiCalls.size()));
        p.apiCalls.name.push_back(cap.strings.intern(name));
        p.apiCalls.returnValue.push_back(0);
        p.apiCalls.kind.push_back(ApiKind::Runtime);
    };
    auto range = [&](RangeTable& t, std::string_view name, TimeNs start, TimeNs end, std::string_view domain = {},
                     RangeKind kind = RangeKind::PushPop, bool onGpu = false) {
        t.start.push_back(start);
        t.end.push_back(end);
        t.name.push_back(cap.strings.intern(name));
        t.globalTid.push_back(1);
        t.domain.push_back(domain.empty() ? kNoId : cap.strings.intern(domain));
        t.category.push_back(0);
        t.color.push_back(0);
        t.kind.push_back(kind);
        t.onGpu.push_back(onGpu ? 1 : 0);
    };
    api("cudaMemcpyAsync", 100, 900);
    api("cudaLaunchKernel", 500, 520);
    api("cudaStreamSynchronize", 500, 4'000);  // same start, ends later: newest
    range(p.ranges, "DataLoader.__next__", 300, 2'500);
    range(p.ranges, "step 3", 200, 5'000);
    range(p.ranges, "ncclAllReduce", 3'000, 3'100, "NCCL");
    range(p.ranges, "a mark", 6'000, 6'000, {}, RangeKind::Mark);
    range(p.ranges, "gpu annotation", 7'000, 8'000, {}, RangeKind::PushPop, true);
    auto cpuOp = [&](std::string_view name, TimeNs start, TimeNs end) {
        p.cpuOps.start.push_back(start);
        p.cpuOps.end.push_back(end);
        p.cpuOps.name.push_back(cap.strings.intern(name));
        p.cpuOps.globalTid.push_back(1);
    };
    cpuOp("aten::copy_", 50, 60);
    cpuOp("aten::to", 40, 9'000);
    const hang::HostActivity h = hang::hostActivityOf(cap, p);
    ASSERT_TRUE(h.apiCall && h.range && h.cpuOp);
    EXPECT_EQ(h.apiCall->name, "cudaStreamSynchronize");
    EXPECT_EQ(h.apiCall->endNs, 4'000);
    EXPECT_EQ(h.range->name, "DataLoader.__next__");
    EXPECT_EQ(h.range->startNs, 300);
    EXPECT_EQ(h.cpuOp->name, "aten::copy_");
    // The latest end of any of them: aten::to, which started first and ended last.
    EXPECT_EQ(h.lastSeenNs, 9'000);

    const hang::HostActivity none = hang::hostActivityOf(cap, Process{});
    EXPECT_FALSE(none.apiCall || none.range || none.cpuOp || none.lastSeenNs);
}

}  // namespace
}  // namespace osc

// Captures whose windows cover different steps (issue 41: ranks attached one
// after another): the cross-rank figures are computed over the steps every
// rank holds, and the report says so. Hand-worked jobs with a known answer:
// rank 0 truly arrives last, by 1 ms, at every all-reduce.
#include "analyzer/crossrank/analyze.h"
#include "tests/analyzer/test_metrics_support.h"

#include <gtest/gtest.h>

namespace osc {
namespace {

constexpr TimeNs kStep = 100'000'000;  // 100 ms
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// Rank `rank` holds steps first..last ("step N" at N * 100 ms): compute
// [+10, +50) ms, then an all-reduce from +60 ms (+61 ms on rank 0: it
// arrives last) to +80 ms. With `plugin`, each all-reduce carries NCCL's
// sequence number as the plugin reports it (step N's is N: counted from the
// communicator's creation, not from the capture's start).
void rankSteps(testing::TraceBuilder& b, int rank, int first, int last, bool plugin) {
    for (int n = first; n <= last; ++n) {
        const TimeNs t = n * kStep;
        b.range(rank, "step " + std::to_string(n), t, t + 90'000'000);
        b.launched(rank, 0, "gemm", t + 1'000'000, t + 10'000'000, t + 50'000'000);
        const TimeNs arrive = t + (rank == 0 ? 61'000'000 : 60'000'000);
        b.launched(rank, 0, kAllReduce, t + 2'000'000, arrive, t + 80'000'000, 13);
        if (plugin) b.pluginRow(rank, 0, 0xABCD, static_cast<uint64_t>(n), "AllReduce", 1 << 20, t + 2'000'000);
    }
}

const DeviceAnalysis& deviceOfRank(const Analysis& a, int rank) {
    for (const auto& d : a.devices)
        if (d.rank == rank) return d;
    throw std::logic_error("no such rank");
}

bool warned(const Analysis& a, const std::string& text) {
    for (const auto& w : a.warnings)
        if (w.find(text) != std::string::npos) return true;
    return false;
}

TEST(CommonSteps, OrdinalMatchingCountsFromTheFirstStepEveryRankHolds) {
    testing::TraceBuilder b;
    rankSteps(b, 0, 10, 19, false);
    rankSteps(b, 1, 12, 21, false);  // attached two steps later
    const Analysis a = analyze(b.finalized(), AnalysisSettings{});
    // Steps 12..19 are common: 8 all-reduces, rank 0 last at each, by 1 ms.
    EXPECT_EQ(a.matched.size(), 8u);
    EXPECT_EQ(deviceOfRank(a, 0).last_arrivals.value_or(-1), 8);
    EXPECT_EQ(deviceOfRank(a, 1).last_arrivals.value_or(-1), 0);
    EXPECT_EQ(deviceOfRank(a, 0).delay_caused_ns.value_or(-1), 8 * 1'000'000);
    EXPECT_TRUE(warned(a, "over the 8 steps all of them hold (step 12 to step 19)")) << a.warnings.size();
    EXPECT_TRUE(warned(a, "step 10 to step 19")) << "the note names each rank's steps";
    EXPECT_TRUE(warned(a, "step 12 to step 21"));
}

TEST(CommonSteps, PluginNumbersMatchTheSameCollectivesAndStepsOutsideAreLeftOut) {
    testing::TraceBuilder b;
    rankSteps(b, 0, 10, 19, true);
    rankSteps(b, 1, 12, 21, true);
    const Analysis a = analyze(b.finalized(), AnalysisSettings{});
    EXPECT_EQ(a.matched.size(), 8u);
    EXPECT_EQ(deviceOfRank(a, 0).last_arrivals.value_or(-1), 8);
    EXPECT_EQ(deviceOfRank(a, 1).last_arrivals.value_or(-1), 0);
    for (const auto& m : a.matched) {
        ASSERT_TRUE(m.seqNumber);
        EXPECT_GE(*m.seqNumber, 12u);
        EXPECT_LE(*m.seqNumber, 19u);
    }
}

TEST(CommonSteps, NothingChangesWhenEveryRankHoldsTheSameSteps) {
    testing::TraceBuilder b;
    rankSteps(b, 0, 12, 19, false);
    rankSteps(b, 1, 12, 19, false);
    const Analysis a = analyze(b.finalized(), AnalysisSettings{});
    EXPECT_EQ(a.matched.size(), 8u);
    EXPECT_EQ(deviceOfRank(a, 0).last_arrivals.value_or(-1), 8);
    EXPECT_FALSE(warned(a, "cover different steps"));
}

TEST(CommonSteps, CapturesWithoutACommonStepMatchNothing) {
    testing::TraceBuilder b;
    rankSteps(b, 0, 10, 13, false);
    rankSteps(b, 1, 20, 23, false);
    const Analysis a = analyze(b.finalized(), AnalysisSettings{});
    EXPECT_TRUE(a.matched.empty());
    EXPECT_EQ(deviceOfRank(a, 1).last_arrivals.value_or(-1), 0);
    EXPECT_TRUE(warned(a, "they hold no step in common"));
}

}  // namespace
}  // namespace osc

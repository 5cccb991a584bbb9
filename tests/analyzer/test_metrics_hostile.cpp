// Issue 14 items 3-4: names and times no real capture has, built in memory,
// must neither crash the analysis nor produce impossible numbers.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/classify.h"
#include "analyzer/metrics/steps.h"
#include "test_metrics_support.h"

#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <random>
#include <string>
#include <vector>

using osc::testing::TraceBuilder;

// 30,000 digits made std::regex recurse once per character and overflow the
// stack (SIGSEGV) with the default --step-pattern.
TEST(HostileNames, AHugeStepLikeNameDoesNotOverflowTheStack) {
    TraceBuilder b;
    const std::string huge = "ProfilerStep#" + std::string(30000, '0');
    b.range(0, huge, 0, 1000);
    b.range(0, "ProfilerStep#1", 1000, 2000);
    b.launched(0, 0, "gemm", 10, 100, 900);
    b.launched(0, 0, "gemm", 1010, 1100, 1900);
    const osc::Analysis a = osc::analyze(b.finalized());
    ASSERT_EQ(a.devices.size(), 1u);
    // The ordinary step is found; the huge one may or may not count, but never crashes.
    bool sawOrdinary = false;
    for (const auto& s : a.devices[0].steps) sawOrdinary |= s.name == "ProfilerStep#1";
    EXPECT_TRUE(sawOrdinary);
}

TEST(HostileNames, AHugeKernelNameWithAUserPatternDoesNotOverflowTheStack) {
    TraceBuilder b;
    const std::string huge = "nccl" + std::string(30000, 'a');
    b.kernel(0, 0, "my" + huge, 0, 100);
    b.kernel(0, 0, "mycomm_x", 200, 300);
    osc::AnalysisSettings settings;
    settings.commKernelPatterns = {"comm.*x", "y.*x"};
    osc::ActivityClassifier classify(b.capture.strings, settings);
    EXPECT_EQ(classify.kernel(b.capture.strings.intern("my" + huge)), osc::Category::Compute);
    EXPECT_EQ(classify.kernel(b.capture.strings.intern("mycomm_x")), osc::Category::Communication);
}

// Issue 14 item 4: compute and communication each covering almost 2^63 ns
// (times within the +-2^62 the readers allow). Their sum, which the speed-ups
// divide, does not fit in 64 bits; summed over devices even each does not.
TEST(HostileTimes, ComputeAndCommunicationOverTheWholeRangeGiveFiniteSpeedups) {
    TraceBuilder b;
    const osc::TimeNs lo = -(osc::TimeNs{1} << 62) + 1, hi = (osc::TimeNs{1} << 62) - 1;
    for (uint32_t device : {0u, 1u}) {
        b.kernel(0, device, "gemm", lo, hi, 7);
        b.kernel(0, device, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", lo, hi, 13);
    }
    const osc::Analysis a = osc::analyze(b.finalized());
    ASSERT_EQ(a.devices.size(), 2u);
    const auto& t = a.devices[0].totals;
    EXPECT_EQ(t.compute_ns, hi - lo);
    EXPECT_EQ(t.comm_ns, hi - lo);
    ASSERT_TRUE(t.achieved_speedup && t.ideal_speedup);
    EXPECT_DOUBLE_EQ(*t.achieved_speedup, 2.0);  // (C + M) / |C u M| with C = M
    EXPECT_DOUBLE_EQ(*t.ideal_speedup, 2.0);
    // The summary saturates instead of wrapping, and its ratios stay right.
    EXPECT_EQ(a.summary.compute_ns, INT64_MAX);
    ASSERT_TRUE(a.summary.achieved_speedup && a.summary.ideal_speedup);
    EXPECT_DOUBLE_EQ(*a.summary.achieved_speedup, 2.0);
    EXPECT_DOUBLE_EQ(*a.summary.ideal_speedup, 2.0);
    EXPECT_DOUBLE_EQ(a.summary.overlap_ratio.value_or(0), 1.0);
}

// Correlation ids of a late window of a long job (millions, a few thousand
// of them, up to just below kNoId): the map's flat table starts at the lowest
// id. Every lookup, the ids around and outside the entered ones included,
// against std::map.
TEST(HostileIds, CorrelationMapAnswersLikeAMapForIdsFarFromZero) {
    std::mt19937 rng(41);
    for (const uint32_t base : {1u, 3'000'000u, osc::kNoId - 5000u}) {
        for (const uint32_t stride : {1u, 3u, 5000u}) {
            std::vector<uint32_t> ids;
            std::vector<int32_t> values;
            std::map<uint32_t, int32_t> truth;
            for (uint32_t i = 0; i < 1000; ++i) {
                const uint64_t id = base + uint64_t{i} * stride;
                if (id >= osc::kNoId) break;
                const int32_t value = static_cast<int32_t>(rng() % 50) - 5;  // some negative: not entered
                ids.push_back(static_cast<uint32_t>(id));
                values.push_back(value);
                if (value >= 0) truth[static_cast<uint32_t>(id)] = value;
            }
            ids.push_back(0);  // unknown ids are never entered
            values.push_back(7);
            ids.push_back(osc::kNoId);
            values.push_back(7);
            osc::CorrelationMap map;
            map.build(ids, values);
            const auto expected = [&](uint32_t id) {
                const auto it = truth.find(id);
                return it == truth.end() ? -1 : it->second;
            };
            std::vector<uint32_t> probes = {0, 1, base - 1, base, osc::kNoId, osc::kNoId - 1, base + 1000 * stride};
            for (const uint32_t id : ids) probes.insert(probes.end(), {id, id + 1, id - 1});
            for (int i = 0; i < 2000; ++i) probes.push_back(static_cast<uint32_t>(rng()));
            for (const uint32_t id : probes)
                ASSERT_EQ(map.find(id), expected(id)) << "id " << id << ", base " << base << ", stride " << stride;
        }
    }
}

// Issue 14 items 3-4: names and times no real capture has, built in memory,
// must neither crash the analysis nor produce impossible numbers.
#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/classify.h"
#include "test_metrics_support.h"

#include <gtest/gtest.h>

#include <string>

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

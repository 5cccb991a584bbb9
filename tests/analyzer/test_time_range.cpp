// Times are checked once a reader is done (checkTimeRanges), and again at
// the end of loading only for the processes the alignment on one timeline
// moved (finishLoading): times each in range in their own file can land
// outside it there.
#include "analyzer/capture/capture_error.h"
#include "analyzer/capture/time_range.h"
#include "tests/analyzer/test_metrics_support.h"

#include <gtest/gtest.h>

using namespace osc;

namespace {

constexpr TimeNs kEighth = TimeNs{1} << 59;

// Rank 0 from its session's start; rank 1's session starts 2^61 ns later,
// its kernel at `late` on its own clock.
Capture twoSessions(TimeNs late) {
    osc::testing::TraceBuilder t;
    t.kernel(0, 0, "gemm", 0, 100);
    t.kernel(1, 0, "gemm", late, late + 100);
    t.process(0).sourcePath = "rank0.sqlite";
    t.process(1).sourcePath = "rank1.sqlite";
    t.process(1).sessionStartUtcNs = 4 * kEighth;
    return std::move(t.capture);
}

std::string refusal(Capture c) {
    try {
        checkTimeRanges(c, 0, "both");
        finishLoading(c);
    } catch (const CaptureError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(TimeRange, AProcessTheAlignmentMovesOutOfRangeIsRefusedNamingItsFile) {
    // 7/8 of the limit on its own clock, 11/8 on the job's.
    const std::string why = refusal(twoSessions(7 * kEighth));
    EXPECT_NE(why.find("rank1.sqlite"), std::string::npos) << why;
    EXPECT_NE(why.find("impossible"), std::string::npos) << why;
    // 3/8 on its own clock, 7/8 on the job's: kept, and moved.
    Capture fine = twoSessions(3 * kEighth);
    EXPECT_EQ(refusal(fine), "");
    finishLoading(fine);
    const auto& moved = fine.processes[0].rank == 1 ? fine.processes[0] : fine.processes[1];
    EXPECT_EQ(moved.devices.at(0).kernels.start.at(0), 7 * kEighth);
}

TEST(TimeRange, ATimeOutOfRangeInAFileIsRefusedBeforeAnyAlignment) {
    osc::testing::TraceBuilder t;
    t.kernel(0, 0, "gemm", 0, 100);
    t.kernel(0, 0, "gemm", 200, TimeNs{1} << 62);
    EXPECT_NE(refusal(std::move(t.capture)).find("kernel 2: time"), std::string::npos);
}

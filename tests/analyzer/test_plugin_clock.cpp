// pluginClockOffset: the NCCL plugin's GPU-timer times against CUPTI's kernel
// times, on hand-made timelines whose offset is known.
#include "analyzer/metrics/plugin_clock.h"

#include <gtest/gtest.h>

#include <random>

namespace osc {
namespace {

// Kernels of the given durations back to back from `t0`, with a gap.
std::vector<TimedSpan> kernelsOf(const std::vector<TimeNs>& durations, TimeNs t0 = 1'000'000, TimeNs gap = 7'000) {
    std::vector<TimedSpan> k;
    TimeNs t = t0;
    for (TimeNs d : durations) {
        k.push_back({t, t + d});
        t += d + gap;
    }
    return k;
}

std::vector<TimedSpan> shifted(std::vector<TimedSpan> spans, TimeNs by) {
    for (auto& s : spans) s.start += by, s.end += by;
    return spans;
}

// The H100 case: 24, 24, 16 MiB all-reduces taking 22.8, 13.5 and 7.9 ms,
// the plugin's rows 766 us early. Without the shift the second row's start
// falls inside the first kernel.
TEST(PluginClock, FindsTheOffsetOfTheH100Captures) {
    std::vector<TimeNs> durations;
    for (int step = 0; step < 10; ++step) durations.insert(durations.end(), {22'767'042, 13'525'112, 7'888'498});
    const auto kernels = kernelsOf(durations, 1'111'503'393, 4'000'000);
    EXPECT_EQ(pluginClockOffset(shifted(kernels, -766'000), kernels), 766'000);
    EXPECT_EQ(pluginClockOffset(shifted(kernels, +2'500'000), kernels), -2'500'000);
}

TEST(PluginClock, SameClockGivesZero) {
    const auto kernels = kernelsOf({50'000, 80'000, 50'000, 120'000});
    EXPECT_EQ(pluginClockOffset(kernels, kernels), 0);
}

TEST(PluginClock, NothingToMatchGivesZero) {
    const auto kernels = kernelsOf({50'000, 80'000});
    EXPECT_EQ(pluginClockOffset({}, kernels), 0);
    EXPECT_EQ(pluginClockOffset(kernels, {}), 0);
    // Rows whose end is unknown say nothing about the clock.
    EXPECT_EQ(pluginClockOffset({{5'000, -1}, {90'000, -1}}, kernels), 0);
    // Durations that match no kernel: no shift is better than none.
    EXPECT_EQ(pluginClockOffset({{0, 3'000'000}}, kernels), 0);
}

// The capture window cut the first collective's row: rows start at the
// second kernel. Pairing by order would be off by one collective; matching
// by duration is not.
TEST(PluginClock, RowsMissingAtTheStartDoNotShiftByOneCollective) {
    const auto kernels = kernelsOf({30'000'000, 10'000'000, 20'000'000, 30'000'000, 10'000'000, 20'000'000});
    const std::vector<TimedSpan> rows(kernels.begin() + 1, kernels.end());
    EXPECT_EQ(pluginClockOffset(shifted(rows, -900'000), kernels), 900'000);
}

// Per-row jitter of a few microseconds (the plugin times the first channel's
// start, the kernel its launch): the median of the pairs is the answer.
TEST(PluginClock, JitteredRowsGiveTheMedianOffset) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<TimeNs> jitter(-3'000, 3'000), duration(200'000, 5'000'000);
    std::vector<TimeNs> durations;
    for (int i = 0; i < 200; ++i) durations.push_back(duration(rng));
    const auto kernels = kernelsOf(durations);
    auto rows = shifted(kernels, -1'234'567);
    for (auto& r : rows) {
        const TimeNs j = jitter(rng);
        r.start += j, r.end += j;
    }
    EXPECT_NEAR(static_cast<double>(pluginClockOffset(rows, kernels)), 1'234'567.0, 3'000.0);
}

}  // namespace
}  // namespace osc

namespace osc {
namespace {

// After the shift a row lands a little before or after its kernel's start;
// back-to-back kernels 6 us apart must not take each other's rows.
TEST(PluginClock, ARowTakesTheNearestKernelOfItsDuration) {
    const std::vector<TimedSpan> kernels = {
        {1'000'000, 19'000'000}, {19'006'000, 31'000'000}, {31'006'000, 39'000'000}};
    EXPECT_EQ(kernelMatchingRow(kernels, 19'005'700, 11'994'000), 1);  // 300 ns early
    EXPECT_EQ(kernelMatchingRow(kernels, 19'006'400, 11'994'000), 1);  // 400 ns late
    EXPECT_EQ(kernelMatchingRow(kernels, 31'005'000, 7'994'000), 2);
    EXPECT_EQ(kernelMatchingRow(kernels, 19'006'000, 2'000'000), -1);   // no kernel of that duration
    EXPECT_EQ(kernelMatchingRow(kernels, 25'000'000, 11'994'000), -1);  // no kernel starts near
}

}  // namespace
}  // namespace osc

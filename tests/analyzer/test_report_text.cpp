// Text and Markdown reports from hand-built analyses: the expected words and
// numbers are worked out by hand in test_report_fixture.h.
#include "analyzer/report/report_costs.h"
#include "analyzer/report/report_format.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_tables.h"
#include "analyzer/report/report_text.h"
#include "tests/analyzer/test_report_fixture.h"
#include "tests/support/occurrences.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace osc;
using namespace osc::report;

namespace {

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

}  // namespace

TEST(ReportFormat, Durations) {
    EXPECT_EQ(formatDuration(0), "0 ns");
    EXPECT_EQ(formatDuration(999), "999 ns");
    EXPECT_EQ(formatDuration(1'500), "1.50 us");
    EXPECT_EQ(formatDuration(3'100'000), "3.10 ms");
    EXPECT_EQ(formatDuration(14'200'000), "14.2 ms");
    EXPECT_EQ(formatDuration(123'456'789), "123 ms");
    EXPECT_EQ(formatDuration(2'500'000'000), "2.50 s");
}

TEST(ReportFormat, PercentBytesFactor) {
    EXPECT_EQ(formatPercent(0.6213), "62%");
    EXPECT_EQ(formatPercent(std::nullopt), "n/a");
    EXPECT_EQ(formatBytes(32ull << 20), "32.0 MiB");
    EXPECT_EQ(formatBytes(512), "512 B");
    EXPECT_EQ(formatBytes(std::nullopt), "n/a");
    EXPECT_EQ(formatFactor(1.5), "1.50x");
}

TEST(ReportFormat, DeviceLabelWithAndWithoutRank) {
    DeviceAnalysis d;
    d.rank = 3;
    d.device = 1;
    EXPECT_EQ(deviceLabel(d), "rank 3 gpu 1");
    d.rank = -1;
    d.host = "h";
    d.pid = 42;
    EXPECT_EQ(deviceLabel(d), "h:42 gpu 1");
}

TEST(ReportFormat, VerdictFollowsComputeVersusComm) {
    EXPECT_EQ(verdict(fixture::metrics(10, 5, 6, 0, 10)), "communication-bound");
    EXPECT_EQ(verdict(fixture::metrics(10, 6, 6, 0, 10)), "compute-bound");
    EXPECT_EQ(verdict(fixture::metrics(10, 6, 0, 0, 6)), "no communication");
}

TEST(ReportFormat, BottleneckSumsBucketPositionOverSteps) {
    const auto a = fixture::oneDeviceAnalysis();
    const auto b = deviceBottleneck(a.devices[0]);
    ASSERT_TRUE(b.found);
    EXPECT_EQ(b.position, 1);
    EXPECT_EQ(b.exposed_ns, 3'100'000);  // 2.0 ms in step 0 + 1.1 ms in step 1
    EXPECT_EQ(b.label, "AllReduce f32 bucket #1");
    ASSERT_TRUE(b.share);
    EXPECT_NEAR(*b.share, 3.1 / 14.2, 1e-9);
}

TEST(ReportFormat, BottleneckWithoutStepsIsTheMostExposedCollective) {
    auto a = fixture::oneDeviceAnalysis();
    auto& d = a.devices[0];
    d.steps.clear();
    for (auto& c : d.collectives) c.step = -1;
    const auto b = deviceBottleneck(d);
    ASSERT_TRUE(b.found);
    EXPECT_EQ(b.collective, 1);
    EXPECT_EQ(b.exposed_ns, 2'000'000);
    EXPECT_EQ(b.label, "AllReduce f32 #1");
}

TEST(ReportFormat, HeadlineIsTheVerdictSentence) {
    const auto a = fixture::oneDeviceAnalysis();
    EXPECT_EQ(headline(a.devices[0]),
              "rank 0 gpu 0: 62% of communication hidden, 14.2 ms exposed of 37.5 ms; "
              "compute-bound; bottleneck: AllReduce f32 bucket #1 (3.10 ms exposed, 22%)");
}

TEST(ReportFormat, HeadlineWithoutCommunication) {
    const auto a = fixture::twoDeviceAnalysis();
    EXPECT_EQ(headline(a.devices[1]), "rank 1 gpu 1: no communication; compute 40.0 ms of 60.0 ms");
}

TEST(ReportText, VerdictFirstThenAlignedTable) {
    const auto a = fixture::oneDeviceAnalysis();
    ReportOptions o;
    o.inputs = {"run.sqlite"};
    const auto text = formatTextReport(a, o);
    const auto ls = lines(text);
    ASSERT_GE(ls.size(), 5u);
    EXPECT_EQ(ls[0], "overlapscope report: 1 device from run.sqlite");
    EXPECT_EQ(ls[1],
              "rank 0 gpu 0: 62% of communication hidden, 14.2 ms exposed of 37.5 ms; "
              "compute-bound; bottleneck: AllReduce f32 bucket #1 (3.10 ms exposed, 22%)");
    // The totals table: header and one row, both the same width (right-aligned columns).
    size_t header = 0;
    while (header < ls.size() && ls[header].find("window") == std::string::npos) ++header;
    ASSERT_LT(header + 1, ls.size());
    EXPECT_EQ(ls[header].size(), ls[header + 1].size());
    EXPECT_NE(ls[header + 1].find("rank 0 gpu 0"), std::string::npos);
    EXPECT_NE(ls[header + 1].find("62%"), std::string::npos);
    // Findings from the steps, told once with the exposed time summed (2.0 + 2.0 ms).
    EXPECT_EQ(osc::testsupport::occurrences(text, "bucket issued after the last compute kernel"), 1u);
    EXPECT_NE(text.find("kernel (seen in 2 steps; 4.00 ms exposed in total)"), std::string::npos);
    // No optional sections unless asked.
    EXPECT_EQ(text.find("Steps on"), std::string::npos);
    EXPECT_EQ(text.find("Collectives on"), std::string::npos);
}

TEST(ReportText, StepsAndCollectivesSections) {
    const auto a = fixture::oneDeviceAnalysis();
    ReportOptions o;
    o.steps = true;
    o.collectives = true;
    o.topCollectives = 3;
    const auto text = formatTextReport(a, o);
    EXPECT_NE(text.find("Steps on rank 0 gpu 0:"), std::string::npos);
    EXPECT_NE(text.find("Collectives on rank 0 gpu 0 (3 most exposed of 4; --top 0 lists all):"), std::string::npos);
    // Step rows name their bottleneck with its position in the step.
    const auto ls = lines(text);
    bool step0 = false, step1 = false;
    for (const auto& l : ls) {
        if (l.find("step 0") == 2 && l.find("AllReduce f32 #1") != std::string::npos) step0 = true;
        if (l.find("step 1") == 2 && l.find("AllReduce f32 #1") != std::string::npos) step1 = true;
    }
    EXPECT_TRUE(step0);
    EXPECT_TRUE(step1);
    // Most exposed first: 2.00 ms, 1.10 ms, 1.00 ms; the 0.5 ms one is cut.
    const auto p2 = text.find("2.00 ms", text.find("Collectives on"));
    const auto p11 = text.find("1.10 ms", text.find("Collectives on"));
    const auto p1 = text.find("1.00 ms", text.find("Collectives on"));
    EXPECT_LT(p2, p11);
    EXPECT_LT(p11, p1);
    EXPECT_EQ(text.find("500 us", text.find("Collectives on")), std::string::npos);
}

TEST(ReportText, MultiRankSummaryAndSpread) {
    const auto a = fixture::twoDeviceAnalysis();
    ReportOptions o;
    o.collectives = true;
    const auto text = formatTextReport(a, o);
    const auto ls = lines(text);
    ASSERT_GE(ls.size(), 4u);
    EXPECT_EQ(ls[3],
              "all 2 devices: 62% of communication hidden, 14.2 ms exposed of 37.5 ms; "
              "compute-bound");
    EXPECT_NE(text.find("all devices"), std::string::npos);
    EXPECT_NE(text.find("250 us spent waiting for the slowest rank over 1 matched collectives"), std::string::npos);
    EXPECT_NE(text.find("step time min/median/max: 29.0 ms / 30.0 ms / 31.0 ms"), std::string::npos);
    EXPECT_NE(text.find("hidden communication min/median/max: 50% / 60% / 70%"), std::string::npos);
    EXPECT_NE(text.find("largest skews:"), std::string::npos);
}

TEST(ReportText, EmptyAnalysis) {
    ReportOptions o;
    o.inputs = {"x.sqlite"};
    EXPECT_EQ(formatTextReport(Analysis{}, o), "overlapscope report: 0 devices from x.sqlite\nno GPU activity found\n");
}

TEST(ReportMarkdown, VerdictListAndTable) {
    const auto a = fixture::twoDeviceAnalysis();
    ReportOptions o;
    o.inputs = {"a|b.sqlite"};
    o.steps = true;
    const auto md = formatMarkdownReport(a, o);
    const auto ls = lines(md);
    EXPECT_EQ(ls[0], "### overlapscope report");
    EXPECT_EQ(ls[2], "- **" + headline(a.devices[0]) + "**");
    // The totals table: header, separator, one row per device, one summary row.
    size_t header = 0;
    while (header < ls.size() && ls[header].rfind("| device |", 0) != 0) ++header;
    ASSERT_LT(header + 4, ls.size());
    EXPECT_EQ(ls[header + 1].rfind("| :--- | ---: |", 0), 0u);
    EXPECT_EQ(ls[header + 2].rfind("| rank 0 gpu 0 |", 0), 0u);
    EXPECT_EQ(ls[header + 3].rfind("| rank 1 gpu 1 |", 0), 0u);
    EXPECT_EQ(ls[header + 4].rfind("| all devices |", 0), 0u);
    const auto cells = osc::testsupport::occurrences(ls[header], "|");
    for (size_t i = header; i <= header + 4; ++i) EXPECT_EQ(osc::testsupport::occurrences(ls[i], "|"), cells) << ls[i];
    EXPECT_NE(md.find("<details><summary>Steps on rank 0 gpu 0</summary>"), std::string::npos);
    EXPECT_NE(md.find("`a|b.sqlite`"), std::string::npos);
}

TEST(ReportTables, CollectivePositionCountsOnlyEarlierCollectivesOfTheSameStep) {
    // Steps interleave and one collective lies outside any step; positions by
    // hand: k0 #0, k1 #0, k2 #1, k3 none, k4 #1, k5 #2.
    DeviceAnalysis d;
    const int steps[] = {0, 1, 0, -1, 1, 0};
    for (int i = 0; i < 6; ++i) {
        CollectiveInstance c;
        c.name = "k" + std::to_string(i);
        c.step = steps[i];
        c.exposed_ns = 100 - i;  // most exposed first keeps the issue order
        c.duration_ns = 100;
        d.collectives.push_back(c);
    }
    const auto ls = lines(collectivesTable(d, 0).render());
    const std::vector<std::string> expected = {"k0 #0", "k1 #0", "k2 #1", "k3 ", "k4 #1", "k5 #2"};
    ASSERT_EQ(ls.size(), expected.size() + 1);  // header first
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(ls[i + 1].rfind("  " + expected[i], 0), 0u) << ls[i + 1];
}

TEST(ReportCosts, SentencesFromHandSetNumbers) {
    DeviceAnalysis d;
    d.rank = 3;
    d.totals.overlap_ns = 13'600'000;
    d.totals.exposed_comm_ns = 10'000'000;
    d.interference.overlapped_compute_ns = 12'000'000;
    d.interference.interfered_compute_ns = 12'000'000;
    d.interference.interference_ns = 2'100'000;
    d.interference.interference_coverage = 1.0;
    d.interference.compute_slowdown = 2.1 / 9.9;
    d.interference.net_overlap_gain_ns = 11'500'000;
    d.wait = WaitTransferMetrics{7'000'000, 6'200'000, 3'800'000};
    auto s = costSentences(d);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0],
              "overlap hid 13.6 ms but slowed compute by 2.10 ms: net 11.5 ms "
              "(compute under communication 21% slower)");
    EXPECT_EQ(s[1],
              "62% of exposed communication (6.20 ms of 10.0 ms) is waiting for other "
              "ranks, not transfer");
    // Interference larger than what overlap hid.
    d.interference.interference_ns = 15'000'000;
    d.interference.net_overlap_gain_ns = -1'400'000;
    s = costSentences(d);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_NE(s[0].find("net -1.40 ms"), std::string::npos) << s[0];
    EXPECT_EQ(s[1].rfind("overlap costs more compute than it hides", 0), 0u) << s[1];

    Analysis a;
    a.devices.resize(2);
    a.devices[0].rank = 0;
    a.devices[0].last_arrivals = 19;
    a.devices[0].delay_caused_ns = 4'000'000;
    a.devices[1] = d;
    a.devices[1].device = 1;
    a.devices[1].last_arrivals = 41;
    a.devices[1].delay_caused_ns = 18'000'000;
    a.matched.resize(60);
    EXPECT_EQ(stragglerSentence(a), "rank 3 gpu 1 arrived last at 41 of 60 collectives (18.0 ms of others' waiting)");
}

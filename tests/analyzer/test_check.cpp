// `check` thresholds on hand-built analyses (values worked out in
// test_report_fixture.h) and the JUnit XML they produce.
#include "analyzer/report/check.h"
#include "tests/analyzer/test_report_fixture.h"

#include <gtest/gtest.h>

#include <cctype>
#include <stdexcept>
#include <vector>

using namespace osc;
using namespace osc::report;

namespace {

std::vector<std::string> failures(const std::vector<CheckOutcome>& outcomes) {
    std::vector<std::string> out;
    for (const auto& o : outcomes)
        if (!o.passed) out.push_back(o.message);
    return out;
}

// A small XML well-formedness check: balanced, properly nested tags, quoted
// attributes, only the five predefined entities, nothing after the root.
bool wellFormedXml(const std::string& x, std::string& why) {
    std::vector<std::string> stack;
    size_t i = 0;
    bool rootClosed = false;
    auto fail = [&](const std::string& w) {
        why = w + " at " + std::to_string(i);
        return false;
    };
    if (x.rfind("<?xml", 0) == 0) i = x.find("?>") + 2;
    while (i < x.size()) {
        if (x[i] == '<') {
            if (rootClosed) return fail("content after the root element");
            const size_t close = x.find('>', i);
            if (close == std::string::npos) return fail("unterminated tag");
            std::string tag = x.substr(i + 1, close - i - 1);
            if (tag.empty()) return fail("empty tag");
            if (tag[0] == '/') {
                const std::string name = tag.substr(1);
                if (stack.empty() || stack.back() != name) return fail("mismatched </" + name + ">");
                stack.pop_back();
                if (stack.empty()) rootClosed = true;
            } else {
                const bool selfClosing = tag.back() == '/';
                if (selfClosing) tag.pop_back();
                size_t n = 0;
                while (n < tag.size() && !std::isspace(static_cast<unsigned char>(tag[n]))) ++n;
                const std::string name = tag.substr(0, n);
                // Attributes: name="value" pairs, no raw '<' or '&' outside entities.
                size_t p = n;
                while (p < tag.size()) {
                    while (p < tag.size() && std::isspace(static_cast<unsigned char>(tag[p]))) ++p;
                    if (p >= tag.size()) break;
                    const size_t eq = tag.find('=', p);
                    if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"')
                        return fail("unquoted attribute in <" + name + ">");
                    const size_t end = tag.find('"', eq + 2);
                    if (end == std::string::npos) return fail("unterminated attribute");
                    const std::string value = tag.substr(eq + 2, end - eq - 2);
                    if (value.find('<') != std::string::npos) return fail("'<' in attribute");
                    p = end + 1;
                }
                if (!selfClosing)
                    stack.push_back(name);
                else if (stack.empty())
                    rootClosed = true;
            }
            i = close + 1;
        } else if (x[i] == '&') {
            const size_t semi = x.find(';', i);
            const std::string ent = x.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
            if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
                return fail("bad entity");
            i = semi + 1;
        } else {
            if (stack.empty() && !std::isspace(static_cast<unsigned char>(x[i]))) return fail("text outside the root");
            ++i;
        }
    }
    if (!stack.empty()) return fail("unclosed <" + stack.back() + ">");
    return rootClosed || fail("no root element");
}

}  // namespace

TEST(Check, MinOverlapRatioPerDeviceAndSummary) {
    const auto a = fixture::twoDeviceAnalysis();  // rank 0: 0.6213, rank 1: no comm
    Thresholds t;
    t.minOverlapRatio = 0.7;
    const auto out = runChecks(a, t);
    ASSERT_EQ(out.size(), 3u);  // two devices and the summary
    EXPECT_EQ(out[0].scope, "rank 0 gpu 0");
    EXPECT_EQ(out[0].name, "min-overlap-ratio");
    EXPECT_FALSE(out[0].passed);
    EXPECT_EQ(out[0].message, "rank 0 gpu 0: overlap ratio 0.621 below the minimum 0.700");
    EXPECT_TRUE(out[1].passed);  // nothing to hide
    EXPECT_EQ(out[2].scope, "summary");
    EXPECT_FALSE(out[2].passed);

    t.minOverlapRatio = 0.62;
    EXPECT_TRUE(failures(runChecks(a, t)).empty());
}

TEST(Check, ExposedMillisecondsIsPerDeviceOnly) {
    const auto a = fixture::twoDeviceAnalysis();  // rank 0 exposes 14.2 ms
    Thresholds t;
    t.maxExposedCommMs = 14.0;
    const auto out = runChecks(a, t);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(failures(out), std::vector<std::string>{"rank 0 gpu 0: exposed communication 14.200 ms above the maximum "
                                                      "14.000 ms"});
    t.maxExposedCommMs = 14.2;
    EXPECT_TRUE(failures(runChecks(a, t)).empty());
}

TEST(Check, ExposedShareOfTheWindow) {
    const auto a = fixture::oneDeviceAnalysis();  // 14.2 / 60 = 0.2367
    Thresholds t;
    t.maxExposedCommShare = 0.2;
    auto f = failures(runChecks(a, t));
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0], "rank 0 gpu 0: exposed communication is 0.237 of the window, above the maximum 0.200");
    t.maxExposedCommShare = 0.25;
    EXPECT_TRUE(failures(runChecks(a, t)).empty());
}

TEST(Check, RegressionAgainstBaseline) {
    const auto base = fixture::oneDeviceAnalysis();
    auto now = base;
    // Overlap 0.6213 -> 0.5 (19.5% lower); exposed 14.2 -> 18.75 ms (32% more).
    now.devices[0].totals = fixture::metrics(60'000'000, 50'000'000, 37'500'000, 18'750'000, 58'000'000);
    Thresholds t;
    t.maxRegressionPercent = 10;
    auto f = failures(runChecks(now, t, &base));
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0], "rank 0 gpu 0: overlap ratio 0.500 vs baseline 0.621, 19.5% lower (allowed 10.0%)");
    EXPECT_EQ(f[1],
              "rank 0 gpu 0: exposed communication 18.750 ms vs baseline 14.200 ms, 32.0% more "
              "(allowed 10.0%)");
    t.maxRegressionPercent = 35;
    EXPECT_TRUE(failures(runChecks(now, t, &base)).empty());
    // The same run is never a regression.
    t.maxRegressionPercent = 0;
    EXPECT_TRUE(failures(runChecks(base, t, &base)).empty());
}

TEST(Check, DeviceMissingFromBaselineFails) {
    const auto base = fixture::oneDeviceAnalysis();
    const auto now = fixture::twoDeviceAnalysis();
    Thresholds t;
    t.maxRegressionPercent = 10;
    const auto f = failures(runChecks(now, t, &base));
    ASSERT_GE(f.size(), 2u);
    EXPECT_EQ(f[0], "rank 1 gpu 1: not in the baseline report");
}

TEST(Check, OptionErrors) {
    const auto a = fixture::oneDeviceAnalysis();
    EXPECT_THROW(runChecks(a, Thresholds{}), std::invalid_argument);
    Thresholds t;
    t.maxRegressionPercent = 5;
    EXPECT_THROW(runChecks(a, t), std::invalid_argument);  // no baseline
    Thresholds r;
    r.minOverlapRatio = 1.5;
    EXPECT_THROW(runChecks(a, r), std::invalid_argument);
    Thresholds onlyBase;
    onlyBase.minOverlapRatio = 0.5;
    EXPECT_THROW(runChecks(a, onlyBase, &a), std::invalid_argument);  // baseline without --max-regression
}

TEST(Check, JunitIsWellFormedWithOneCasePerOutcome) {
    auto a = fixture::twoDeviceAnalysis();
    a.devices[0].host = "n<&>\"'";  // escaped wherever it appears
    a.devices[0].rank = -1;
    Thresholds t;
    t.minOverlapRatio = 0.7;
    t.maxExposedCommMs = 1;
    const auto out = runChecks(a, t);
    const auto xml = formatJunit(out, "overlapscope check");
    std::string why;
    EXPECT_TRUE(wellFormedXml(xml, why)) << why << "\n" << xml;
    size_t cases = 0, fails = 0;
    for (size_t p = xml.find("<testcase "); p != std::string::npos; p = xml.find("<testcase ", p + 1)) ++cases;
    for (size_t p = xml.find("<failure "); p != std::string::npos; p = xml.find("<failure ", p + 1)) ++fails;
    EXPECT_EQ(cases, out.size());
    EXPECT_EQ(fails, failures(out).size());
    EXPECT_NE(xml.find("tests=\"" + std::to_string(out.size()) + "\" failures=\"" + std::to_string(fails) + "\""),
              std::string::npos);
    EXPECT_NE(xml.find("classname=\"n&lt;&amp;&gt;&quot;&apos;:100 gpu 0\""), std::string::npos);
}

TEST(Check, WellFormednessCheckerRejectsBrokenXml) {
    std::string why;
    EXPECT_FALSE(wellFormedXml("<a><b></a></b>", why));
    EXPECT_FALSE(wellFormedXml("<a x=1></a>", why));
    EXPECT_FALSE(wellFormedXml("<a>&nbsp;</a>", why));
    EXPECT_FALSE(wellFormedXml("<a>", why));
    EXPECT_TRUE(wellFormedXml("<a x=\"1\"><b/>t&amp;</a>\n", why)) << why;
}

TEST(Check, InterferenceWaitAndDelayThresholdsPerDevice) {
    // Two devices by hand: rank 0 slowed 10% (interference 100 of 1000 ns
    // baseline), 2 ms exposed transfer, caused 0.5 ms of waiting; rank 1 has
    // no baseline, 0.5 ms exposed transfer and caused nothing.
    Analysis a;
    a.devices.resize(2);
    a.devices[0].rank = 0;
    a.devices[0].interference.compute_slowdown = 0.10;
    a.devices[0].wait = WaitTransferMetrics{1'000'000, 500'000, 2'000'000};
    a.devices[0].last_arrivals = 3;
    a.devices[0].delay_caused_ns = 500'000;
    a.devices[1].rank = 1;
    a.devices[1].device = 1;
    a.devices[1].wait = WaitTransferMetrics{0, 0, 500'000};
    a.devices[1].last_arrivals = 0;
    a.devices[1].delay_caused_ns = 0;
    Thresholds t;
    t.maxComputeSlowdown = 0.05;
    t.maxExposedTransferMs = 1.0;
    t.maxDelayCausedMs = 0.25;
    const auto out = runChecks(a, t);
    const auto failed = failures(out);
    ASSERT_EQ(failed.size(), 3u);
    EXPECT_NE(failed[0].find("10.0% slower"), std::string::npos) << failed[0];
    EXPECT_NE(failed[1].find("exposed transfer 2.000 ms"), std::string::npos) << failed[1];
    EXPECT_NE(failed[2].find("arriving last at 3 collectives"), std::string::npos) << failed[2];
    // Rank 1 passes all three: no baseline, 0.5 ms transfer, no delay caused.
    size_t rank1 = 0;
    for (const auto& o : out) rank1 += o.scope == "rank 1 gpu 1" && o.passed;
    EXPECT_EQ(rank1, 3u);
    // One device: exposed transfer falls back to all exposed communication.
    Analysis one;
    one.devices.resize(1);
    one.devices[0].totals.exposed_comm_ns = 3'000'000;
    Thresholds only;
    only.maxExposedTransferMs = 2.0;
    ASSERT_EQ(failures(runChecks(one, only)).size(), 1u);
    Thresholds bad;
    bad.maxDelayCausedMs = -1;
    EXPECT_THROW(runChecks(a, bad), std::invalid_argument);
}

// Issue 42 end to end: `check --baseline` and `diff --fail-on-step-regression`
// on synthetic runs with known noise (--jitter) and a known slowdown of the
// link, and the bus-bandwidth gate on the real H100 captures, whose two
// ranks share one GPU (no fraction of a link).
#include "cli_fixture.h"
#include "tests/support/occurrences.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using osc::testsupport::occurrences;

TEST_F(Cli, BaselineJudgesStepsAgainstTheirNoise) {
    // 20 steps, every kernel +-4 %, the link 25 GB/s; the candidate's link
    // 23 GB/s: 8.7 % more time per all-reduce.
    const std::string common = " --steps 20 --jitter 0.04 ";
    const auto base = path("base.sqlite"), same = path("same.sqlite"), slow = path("slow.sqlite");
    ASSERT_EQ(run("synth" + common + "--seed 1 -o " + quote(base)).code, 0);
    ASSERT_EQ(run("synth" + common + "--seed 2 -o " + quote(same)).code, 0);
    ASSERT_EQ(run("synth" + common + "--seed 3 --bandwidth-gbps 23 -o " + quote(slow)).code, 0);
    const auto baseJson = path("base.json");
    ASSERT_EQ(run("report --format json -o " + quote(baseJson) + " " + quote(base)).code, 0);

    auto r = run("check --baseline " + quote(baseJson) + " " + quote(same));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.out, "ok: 3 checks passed on 1 device\n");  // step time, exposed, the all-reduces

    const auto junit = path("gate.xml");
    r = run("check --baseline " + quote(baseJson) + " --junit " + quote(junit) + " " + quote(slow));
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL rank 0 gpu 0: AllReduce on communicator #0 +"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" at 95 % over 3 comparisons, 20 steps each (median "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("): worse beyond step-to-step noise\n"), std::string::npos) << r.out;
    const std::string xml = slurp(junit);
    EXPECT_NE(xml.find("name=\"collective-time-regression: AllReduce on communicator #0\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("name=\"step-time-regression\""), std::string::npos) << xml;

    // A minimum effect above the slowdown passes it, saying nothing failed.
    r = run("check --baseline " + quote(baseJson) + " --min-effect 30% " + quote(slow));
    EXPECT_EQ(r.code, 0) << r.out << r.err;

    // diff shows every comparison and gates on them when asked.
    r = run("diff --format json " + quote(baseJson) + " " + quote(slow));
    EXPECT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& steps = j["step_comparisons"];
    EXPECT_EQ(steps["comparisons"], 3);
    EXPECT_EQ(steps["regressed"], true);
    ASSERT_EQ(steps["rows"].size(), 3u);
    EXPECT_EQ(steps["rows"][2]["what"], "AllReduce on communicator #0");
    EXPECT_EQ(steps["rows"][2]["verdict"], "regression");
    EXPECT_GT(steps["rows"][2]["low_pct"].get<double>(), 0.0);
    EXPECT_EQ(run("diff --fail-on-step-regression " + quote(baseJson) + " " + quote(slow)).code, 1);
    r = run("diff --fail-on-step-regression " + quote(base) + " " + quote(same));
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("no regression beyond step-to-step noise (3 comparisons)"), std::string::npos) << r.out;
}

TEST_F(Cli, TooFewStepsFailRatherThanPass) {
    const auto base = bucketed(2);
    const auto baseJson = path("base.json");
    ASSERT_EQ(run("report --format json -o " + quote(baseJson) + " " + quote(base)).code, 0);
    auto r = run("check --baseline " + quote(baseJson) + " " + quote(base));
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out,
              "FAIL rank 0 gpu 0: step time, exposed communication and collectives: too few steps to tell a change "
              "from noise (2 in the baseline, 2 in the candidate; at least 10 each)\n");
    // The whole-run comparison alone, as before, needs no steps.
    EXPECT_EQ(run("check --baseline " + quote(baseJson) + " --max-regression 5 " + quote(base)).code, 0);
    // Bad noise options are usage errors.
    for (const std::string bad :
         {"--confidence 1", "--confidence 0.2", "--min-effect -1", "--min-effect x", "--min-steps 1"}) {
        r = run("check --baseline " + quote(baseJson) + " " + bad + " " + quote(base));
        EXPECT_EQ(r.code, 2) << bad;
        EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    }
    EXPECT_EQ(run("check --min-overlap-ratio 0.1 --confidence 0.9 " + quote(base)).code, 2);  // no baseline
    EXPECT_EQ(run("diff --min-steps 0 " + quote(base) + " " + quote(base)).code, 2);
}

// examples/h100: two ranks time-slice one GPU, so neither has a link to
// measure. `check --min-busbw-fraction 0.9` said "ok: 2 checks passed".
TEST_F(Cli, UnmeasuredBusBandwidthSaysWhyOrFails) {
    const std::string h100 = quote(std::string(OSC_SOURCE_DIR) + "/examples/h100/ddp_bucketed");
    const auto junit = path("busbw.xml");
    auto r = run("check --min-busbw-fraction 0.9 --junit " + quote(junit) + " " + h100);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(occurrences(r.out, "SKIP rank "), 2u) << r.out;
    EXPECT_NE(r.out.find("SKIP rank 0 gpu 0: bus bandwidth against the link's peak not measured (it shares its GPU "
                         "with other ranks"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("ok: 0 checks passed and 2 skipped (SKIP above) on 2 devices\n"), std::string::npos) << r.out;
    const std::string xml = slurp(junit);
    EXPECT_NE(xml.find("skipped=\"2\""), std::string::npos) << xml;
    EXPECT_EQ(occurrences(xml, "<skipped message="), 2u) << xml;

    r = run("check --min-busbw-fraction 0.9 --require-busbw " + h100);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(occurrences(r.out, "FAIL rank "), 2u) << r.out;
    EXPECT_EQ(run("check --min-overlap-ratio 0 --require-busbw " + h100).code, 2);  // nothing to require
}

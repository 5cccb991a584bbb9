// Pipeline, all-to-all and point-to-point end to end: `synth --workload`,
// `report`, `check --max-bubble-share / --max-alltoall-imbalance`,
// `--microbatch-pattern`, `--pipeline-stages`, `export` and back, `diff`.
// The answers are the models' (analyzer/synth/README.md).
#include "cli_fixture.h"
#include "tests/support/occurrences.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using osc::testsupport::occurrences;

TEST_F(Cli, PipelineModelReportAndBubbleGate) {
    const auto dir = path("pp");
    auto r = run("synth --workload pipeline --steps 2 -o " + quote(dir));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(lineCount(r.out), 4u);  // one file per stage

    r = run("report " + quote(dir));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("pipeline: 2 step(s), 4 stages, 8 micro-batches; the stages idle 27% of the pipeline "
                         "window, fill and drain ((S-1)/(M+S-1)) explain 27%"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("point-to-point: 96 send(s) matched"), std::string::npos) << r.out;

    // 3/11 = 0.273 on every stage.
    r = run("check --max-bubble-share 0.3 " + quote(dir));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    r = run("check --max-bubble-share 0.25 " + quote(dir));
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(occurrences(r.out, "FAIL"), 5u) << r.out;  // four stages and the summary
    EXPECT_NE(r.out.find("FAIL rank 2 gpu 2: pipeline bubble 0.273 of the pipeline window (theory 0.273), above "
                         "the maximum 0.250"),
              std::string::npos)
        << r.out;

    // Eight stages of which four were captured: the theory follows the option.
    r = run("report --format json --pipeline-stages 8 " + quote(dir));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j["pipeline"][0]["theoretical_bubble_share"].get<double>(), 7.0 / 15.0, 1e-12);
    EXPECT_EQ(j["settings"]["pipeline_stages"], 8);

    // Ranges named otherwise: nothing is a micro-batch, no pipeline.
    r = run("report --format json --microbatch-pattern '^(f)orward_(\\d+)$' " + quote(dir));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(nlohmann::json::parse(r.out)["pipeline"].empty());
}

TEST_F(Cli, AllToAllModelImbalanceGate) {
    const auto dir = path("moe");
    ASSERT_EQ(run("synth --workload alltoall --imbalance 3 --hot-rank 1 -o " + quote(dir)).code, 0);
    auto r = run("check --max-alltoall-imbalance 1.2 " + quote(dir));
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_EQ(r.out,
              "FAIL summary: all-to-all imbalance 1.33 (bytes) in step 'step 0', rank 1 gpu 1 overloaded, "
              "above the maximum 1.20\n");
    r = run("check --max-alltoall-imbalance 1.5 " + quote(dir));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    r = run("report " + quote(dir));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("rank 1 gpu 1 moves 1.33x the mean all-to-all bytes of the step"), std::string::npos) << r.out;
}

TEST_F(Cli, ExportedTraceReadsBackWithTheSamePatterns) {
    const auto pp = path("pp"), moe = path("moe");
    ASSERT_EQ(
        run("synth --workload pipeline --stages 3 --microbatches 4 --steps 1 --transfer-ns 50000 -o " + quote(pp)).code,
        0);
    ASSERT_EQ(run("synth --workload alltoall --imbalance 2 --steps 1 -o " + quote(moe)).code, 0);
    for (const auto& dir : {pp, moe}) {
        const auto trace = dir + ".json";
        ASSERT_EQ(run("export -o " + quote(trace) + " " + quote(dir)).code, 0);
        const auto a = run("report --format json " + quote(dir));
        const auto b = run("report --format json " + quote(trace));
        ASSERT_EQ(a.code, 0) << a.err;
        ASSERT_EQ(b.code, 0) << b.err;
        const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
        EXPECT_EQ(ja["pipeline"].size(), jb["pipeline"].size());
        EXPECT_EQ(ja["p2p_transfers"].size(), jb["p2p_transfers"].size()) << dir;
        EXPECT_EQ(ja["summary"]["bubble_ns"], jb["summary"]["bubble_ns"]) << dir;
        EXPECT_EQ(ja["summary"]["alltoall_imbalance"], jb["summary"]["alltoall_imbalance"]) << dir;
        for (size_t d = 0; d < ja["devices"].size(); ++d) {
            EXPECT_EQ(ja["devices"][d]["totals"]["comm_wait_ns"], jb["devices"][d]["totals"]["comm_wait_ns"]);
            EXPECT_EQ(ja["devices"][d]["totals"]["exposed_alltoall_ns"],
                      jb["devices"][d]["totals"]["exposed_alltoall_ns"]);
        }
    }
}

TEST_F(Cli, PatternDiffShowsTheBubble) {
    const auto base = path("base"), slow = path("slow");
    ASSERT_EQ(run("synth --workload pipeline --steps 1 -o " + quote(base)).code, 0);
    ASSERT_EQ(run("synth --workload pipeline --steps 1 --slow-stage 3 --slow-factor 2 -o " + quote(slow)).code, 0);
    const auto r = run("diff --format json " + quote(base) + " " + quote(slow));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& share = j["rows"][0]["metrics"]["bubble_share"];
    EXPECT_NEAR(share["base"].get<double>(), 3.0 / 11.0, 1e-12);
    EXPECT_NEAR(share["candidate"].get<double>(), (3 * 16.5 + 4.5) / (4 * 28.5), 1e-12);
}

TEST_F(Cli, PatternOptionErrorsExitTwo) {
    const auto dir = path("pp");
    ASSERT_EQ(run("synth --workload pipeline --steps 1 -o " + quote(dir)).code, 0);
    for (const std::string bad : {"check --max-alltoall-imbalance 0.5 ", "check --max-bubble-share 2 ",
                                  "report --microbatch-pattern '(fwd) mb' ", "report --microbatch-pattern '(' "}) {
        const auto r = run(bad + quote(dir));
        EXPECT_EQ(r.code, 2) << bad << r.out;
        EXPECT_EQ(lineCount(r.err), 1u) << bad << r.err;
    }
    EXPECT_EQ(run("report --pipeline-stages -1 " + quote(dir)).code, 2);  // a usage error
    EXPECT_EQ(run("synth --workload ring -o " + quote(path("x"))).code, 2);
    const auto r = run("report --microbatch-pattern '(fwd) mb' " + quote(dir));
    EXPECT_NE(r.err.find("needs two groups"), std::string::npos) << r.err;
    for (const std::string bad :
         {"--workload pipeline --layers 3", "--workload alltoall --stages 3", "--workload alltoall --ranks 2",
          "--workload pipeline --ranks 4", "--workload pipeline --stages 1", "--workload alltoall --imbalance 0.5"}) {
        const auto s = run("synth " + bad + " -o " + quote(path("x")));
        EXPECT_EQ(s.code, 2) << bad << s.out;
        EXPECT_EQ(lineCount(s.err), 1u) << bad << s.err;
    }
}

// Runs the built `overlapscope` binary end to end: --help everywhere, bad
// input -> one line naming the file and exit 2, synth -> report/check with the
// answers the workload model fixes (analyzer/synth/README.md).
#include "cli_fixture.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

TEST_F(Cli, HelpForEveryCommandExitsZero) {
    for (const char* cmd :
         {"", "report", "check", "synth", "diff", "export", "hang", "run", "attach", "detach", "ps"}) {
        const auto r = run(std::string(cmd) + " --help");
        EXPECT_EQ(r.code, 0) << cmd << ": " << r.err;
        EXPECT_NE(r.out.find("--help"), std::string::npos) << cmd;
    }
}

TEST_F(Cli, MissingFileIsOneLineNamingItExitTwo) {
    const auto missing = path("nope.sqlite");
    for (const std::string cmd : {"report ", "check --min-overlap-ratio 0.5 "}) {
        const auto r = run(cmd + quote(missing));
        EXPECT_EQ(r.code, 2) << cmd;
        EXPECT_EQ(lineCount(r.err), 1u) << r.err;
        EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty());
    }
}

TEST_F(Cli, GarbageFileIsOneLineExitTwo) {
    const auto junk = path("junk.sqlite");
    std::ofstream(junk) << "this is not a capture\n";
    const auto r = run("report " + quote(junk));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(junk), std::string::npos);
}

TEST_F(Cli, UsageErrorsExitTwo) {
    EXPECT_EQ(run("report").code, 2);                  // no capture
    EXPECT_EQ(run("report x --format yaml").code, 2);  // bad format
    EXPECT_EQ(run("synth -o " + quote(path("a.sqlite")) + " --mode overlapped").code, 2);
    const auto f = bucketed();
    const auto r = run("check " + quote(f));  // no threshold
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("at least one threshold"), std::string::npos) << r.err;
    EXPECT_EQ(run("check " + quote(f) + " --max-regression 5").code, 2);  // no baseline
}

TEST_F(Cli, ReportTextStartsWithTheVerdict) {
    const auto f = bucketed();
    const auto r = run("report " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    std::istringstream in(r.out);
    std::string first, second;
    std::getline(in, first);
    std::getline(in, second);
    EXPECT_EQ(first, "overlapscope report: 1 device from " + f);
    // 2/3 hidden; 2 x 1.362177 ms exposed of 6 x 1.362177 ms; the last bucket.
    EXPECT_EQ(second,
              "rank 0 gpu 0: 67% of communication hidden, 2.72 ms exposed of 8.17 ms; "
              "compute-bound; bottleneck: AllReduce f32 bucket #2 (2.72 ms exposed, 100%)");
}

TEST_F(Cli, ReportJsonHasTheModelsAnswers) {
    const auto f = bucketed(3);
    const auto r = run("report --format json " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["format"], "overlapscope-report");
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["inputs"][0], f);
    const auto& t = j["devices"][0]["totals"];
    EXPECT_EQ(t["compute_ns"], 3 * 18'000'000);
    EXPECT_EQ(t["comm_ns"], 9 * 1'362'177);
    EXPECT_EQ(t["exposed_comm_ns"], 3 * 1'362'177);
    EXPECT_EQ(j["devices"][0]["steps"].size(), 3u);
    EXPECT_EQ(j["summary"]["exposed_comm_ns"], 3 * 1'362'177);
}

TEST_F(Cli, ReportOutputFileNeedsForceToReplace) {
    const auto f = bucketed();
    const auto out = path("report.md");
    auto r = run("report --format markdown -o " + quote(out) + " " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(slurp(out).rfind("### overlapscope report", 0), 0u);
    std::ofstream(out) << "keep me";
    r = run("report -o " + quote(out) + " " + quote(f));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(out), std::string::npos);
    EXPECT_EQ(slurp(out), "keep me");
    r = run("report --force -o " + quote(out) + " " + quote(f));
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(slurp(out).rfind("overlapscope report:", 0), 0u);
}

TEST_F(Cli, CheckPassesAndFailsOnThresholds) {
    const auto f = bucketed();
    auto r = run("check --min-overlap-ratio 0.6 " + quote(f));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.out, "ok: 1 checks passed on 1 device\n");

    r = run("check --min-overlap-ratio 0.7 --max-exposed-comm-ms 1 " + quote(f));
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out,
              "FAIL rank 0 gpu 0: overlap ratio 0.667 below the minimum 0.700\n"
              "FAIL rank 0 gpu 0: exposed communication 2.724 ms above the maximum 1.000 ms\n");
}

TEST_F(Cli, CheckAgainstBaselineAndJunit) {
    // Baseline: bucketed. Now: sequential, which hides nothing.
    const auto base = bucketed();
    const auto baseJson = path("base.json");
    ASSERT_EQ(run("report --format json -o " + quote(baseJson) + " " + quote(base)).code, 0);
    const auto seq = path("seq.sqlite");
    ASSERT_EQ(run("synth --mode sequential --steps 2 -o " + quote(seq)).code, 0);
    const auto junit = path("check.xml");
    std::ofstream(junit) << "old";  // an artifact path: replaced
    auto r =
        run("check --baseline " + quote(baseJson) + " --max-regression 10% --junit " + quote(junit) + " " + quote(seq));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(lineCount(r.out), 2u) << r.out;
    EXPECT_NE(r.out.find("overlap ratio 0.000 vs baseline 0.667"), std::string::npos) << r.out;
    const auto xml = slurp(junit);
    EXPECT_EQ(xml.rfind("<?xml", 0), 0u);
    EXPECT_NE(xml.find("tests=\"2\" failures=\"2\""), std::string::npos) << xml;
    // The baseline against itself passes.
    r = run("check --baseline " + quote(baseJson) + " --max-regression 0 " + quote(base));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    // A broken baseline is bad input.
    std::ofstream(path("bad.json")) << "{}";
    r = run("check --baseline " + quote(path("bad.json")) + " --max-regression 1 " + quote(base));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("bad.json"), std::string::npos);
}

TEST_F(Cli, SynthRanksWritesADirectoryAndRefusesToOverwrite) {
    const auto d = path("ranks");
    auto r = run("synth --ranks 2 --steps 1 -o " + quote(d));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(fs::path(d) / "synth-host-4000-rank0.sqlite"));
    EXPECT_TRUE(fs::exists(fs::path(d) / "synth-host-4001-rank1.sqlite"));
    EXPECT_EQ(lineCount(r.out), 2u);
    r = run("synth --ranks 2 --steps 1 -o " + quote(d));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("--force"), std::string::npos);
    EXPECT_EQ(run("synth --ranks 2 --steps 1 --force -o " + quote(d)).code, 0);
    r = run("report --collectives " + quote(d));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("all 2 devices"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Across ranks:"), std::string::npos) << r.out;
}

TEST_F(Cli, SynthKernelsMode) {
    const auto f = path("k.sqlite");
    auto r = run("synth --kernels 5000 --streams 8 -o " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    r = run("report --format json " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["devices"][0]["totals"]["comm_ns"].get<long long>(), 0);
    // The last of the 8 streams carries the NCCL kernels.
    const auto n = j["devices"][0]["collectives"].size();
    EXPECT_GT(n, 100u);
    EXPECT_LT(n, 5000u / 8 + 1);
    for (const auto& c : j["devices"][0]["collectives"]) EXPECT_EQ(c["stream"], 14);
}

TEST_F(Cli, CommittedExampleReports) {
    const std::string ex = std::string(OSC_SOURCE_DIR) + "/examples/ddp_bucketed.sqlite";
    ASSERT_TRUE(fs::exists(ex)) << ex;
    const auto r = run("report " + quote(ex));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("of communication hidden"), std::string::npos);
}

TEST_F(Cli, CheckFailsOnACaptureWithoutGpuActivity) {
    // A PyTorch profiler trace with CPU ops only (profiled without CUDA activity).
    const auto f = path("cpu_only.json");
    std::ofstream(f) << R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm",)"
                     << R"("pid":1,"tid":1,"ts":1,"dur":5}]})";
    const auto r = run("check --min-overlap-ratio 0.5 " + quote(f));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.out, "FAIL no GPU activity in the capture: nothing to check\n");
}

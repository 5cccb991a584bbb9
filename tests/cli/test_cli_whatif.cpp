// `overlapscope whatif` end to end: help, the text and JSON documents
// (docs/cli.md), answers checked against synth captures made at the predicted
// bucket sizes (read by `report`, not by the what-if code), and bad input.
#include "cli_fixture.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

// synth: 10 layers of 8 MiB, buckets of `mb` (at least), 3 steps.
std::string synthAt(Cli& cli, const std::string& dir, double mb) {
    const std::string f = dir + "/synth-" + std::to_string(static_cast<int>(mb)) + ".sqlite";
    if (!fs::exists(f)) {
        char arg[32];
        std::snprintf(arg, sizeof arg, "%g", mb);
        EXPECT_EQ(0, std::system((std::string(OSC_CLI_PATH) + " synth -o " + quote(f) +
                                  " --layers 10 --steps 3 --optimizer-ns 200000 --bucket-mb " + arg + " >/dev/null")
                                     .c_str()));
    }
    (void)cli;
    return f;
}

class CliWhatIf : public Cli {
protected:
    std::string capture(double mb) { return synthAt(*this, dir_.string(), mb); }
    // The median step window and exposed communication `report` finds.
    std::pair<int64_t, int64_t> reported(const std::string& f) {
        const auto r = run("report --format json " + quote(f));
        EXPECT_EQ(r.code, 0) << r.err;
        const auto steps = nlohmann::json::parse(r.out)["devices"][0]["steps"];
        return {steps[1]["window_ns"].get<int64_t>(), steps[1]["exposed_comm_ns"].get<int64_t>()};
    }
};

TEST_F(CliWhatIf, HelpNamesTheOptions) {
    const auto r = run("whatif --help");
    EXPECT_EQ(r.code, 0);
    for (const char* opt : {"--bucket-mb", "--format", "--summary", "--bucket-rule", "--comm-copies"})
        EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
}

TEST_F(CliWhatIf, TextTableWithTheBestAndTheSelfCheck) {
    // The size list before the capture: the list ends at its one argument.
    const auto r = run("whatif --bucket-mb 8,25,100 " + quote(capture(25)));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("bucket MiB  buckets  step ms  exposed ms  overlap"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("self-check"), std::string::npos);
    EXPECT_NE(r.out.find("best: 8 MiB"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("8 *"), std::string::npos) << r.out;
}

TEST_F(CliWhatIf, JsonPredictsWhatSynthMakesAtThoseSizes) {
    const auto r = run("whatif --format json " + quote(capture(25)) + " --bucket-mb 8,100");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["format"], "overlapscope-whatif");
    EXPECT_EQ(j["version"], 1);
    ASSERT_EQ(j["devices"].size(), 1u);
    const auto& d = j["devices"][0];
    EXPECT_EQ(d["rank"], 0);
    EXPECT_EQ(d["device"], 0);
    for (const char* k : {"alpha_ns", "ns_per_byte", "samples", "r2"}) EXPECT_TRUE(d["fit"].contains(k)) << k;
    for (const char* k : {"bucket_mb", "buckets", "step_ns", "exposed_comm_ns"})
        EXPECT_TRUE(d["observed"].contains(k)) << k;
    // synth's cost: 20 us + 1/25 ns per byte, fitted from buckets of 32 and 16 MiB.
    EXPECT_NEAR(d["fit"]["alpha_ns"].get<double>(), 20'000, 1);
    EXPECT_NEAR(d["fit"]["ns_per_byte"].get<double>(), 0.04, 1e-6);
    EXPECT_EQ(d["observed"]["buckets"], 3);
    EXPECT_NEAR(d["self_check_error"].get<double>(), 0.0, 1e-6);
    ASSERT_EQ(d["scenarios"].size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        const auto& s = d["scenarios"][i];
        for (const char* k : {"bucket_mb", "buckets", "step_ns", "exposed_comm_ns", "overlap_ratio"})
            EXPECT_TRUE(s.contains(k)) << k;
        const auto [step, exposed] = reported(capture(s["bucket_mb"].get<double>()));
        EXPECT_NEAR(s["step_ns"].get<double>() / static_cast<double>(step), 1.0, 1e-4) << i;
        EXPECT_NEAR(s["exposed_comm_ns"].get<double>(), static_cast<double>(exposed), 1e-4 * static_cast<double>(step))
            << i;
    }
    EXPECT_EQ(d["scenarios"][0]["buckets"], 10);
    EXPECT_EQ(d["scenarios"][1]["buckets"], 1);
    EXPECT_FALSE(j.contains("summary"));
    const auto s = nlohmann::json::parse(run("whatif --format json --summary " + quote(capture(25))).out);
    EXPECT_EQ(s["summary"]["scenarios"].size(), 6u);  // the default 1,5,10,25,50,100
}

TEST_F(CliWhatIf, BadInputIsOneLineExitTwo) {
    const auto f = capture(25);
    const auto missing = path("nope.sqlite");
    auto r = run("whatif " + quote(missing));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(missing), std::string::npos);
    // Values the command checks: one line.
    for (const std::string bad : {"--bucket-mb 0", "--bucket-mb 1,0.5,-5", "--backward-pattern '('", "--alpha-ns=-1",
                                  "--observed-mb 0", "--grad-mb=-3"}) {
        r = run("whatif " + quote(f) + " " + bad);
        EXPECT_EQ(r.code, 2) << bad;
        EXPECT_EQ(lineCount(r.err), 1u) << bad << ": " << r.err;
    }
    // Usage errors: one line too, exit 2.
    for (const std::string bad : {"--bucket-mb x", "--bucket-rule exact", "--format yaml", "--readiness soon"}) {
        r = run("whatif " + quote(f) + " " + bad);
        EXPECT_EQ(r.code, 2) << bad;
        EXPECT_EQ(lineCount(r.err), 1u) << bad << ": " << r.err;
    }
    // Nothing to model is an answer, not an error.
    const auto seq = path("gemm-only.sqlite");
    ASSERT_EQ(run("synth -o " + quote(seq) + " --kernels 100 --streams 1").code, 0);
    r = run("whatif " + quote(seq));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("not modelled"), std::string::npos) << r.out;
}

TEST_F(CliWhatIf, RefusesACaptureTheModelDoesNotFitUnlessForced) {
    // Tensor parallelism: reduce-scatters inside the forward pass. One line
    // saying why, exit 2; --force models it and says so among the warnings.
    const std::string tp = quote(std::string(OSC_SOURCE_DIR) + "/examples/h100/tp_pipelined");
    auto r = run("whatif " + tp);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("inside the forward pass"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "no table, no best size";
    r = run("whatif --force --format json " + tp);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("modelled with --force although"), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    bool said = false;
    for (const auto& w : j["warnings"]) said |= w.get<std::string>().find("forward pass") != std::string::npos;
    EXPECT_TRUE(said) << j["warnings"];
}

TEST_F(CliWhatIf, OutputFileIsNotReplacedWithoutForce) {
    const auto f = capture(25);
    const auto out = path("whatif.json");
    ASSERT_EQ(run("whatif --format json -o " + quote(out) + " " + quote(f)).code, 0);
    EXPECT_EQ(nlohmann::json::parse(slurp(out))["format"], "overlapscope-whatif");
    EXPECT_EQ(run("whatif -o " + quote(out) + " " + quote(f)).code, 2);
    EXPECT_EQ(run("whatif --force -o " + quote(out) + " " + quote(f)).code, 0);
}

}  // namespace

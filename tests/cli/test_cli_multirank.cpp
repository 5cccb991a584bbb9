// Issue 16 end to end: several captures analysed file by file (--jobs),
// `report --partial` + `merge` giving the report of the captures byte for
// byte, `check` and `diff` reading partials and merged reports, the refusals,
// and the progress line on a terminal.
#include "cli_fixture.h"

#include <pty.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

namespace {

class MultiRank : public Cli {
protected:
    // Six ranks, each arriving a little later than the one before.
    std::string job() {
        const auto d = path("job");
        if (!fs::exists(d)) {
            const auto r =
                run("synth -o " + quote(d) +
                    " --ranks 6 --steps 3 --mode per-param --jitter 0.1 --arrival-skew-ns 0,1000,20000,300,0,50000");
            EXPECT_EQ(r.code, 0) << r.err;
        }
        return d;
    }
    std::vector<std::string> rankFiles() {
        std::vector<std::string> files;
        for (const auto& e : fs::directory_iterator(job())) files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        return files;
    }
    static std::string joined(const std::vector<std::string>& files, size_t from, size_t to) {
        std::string s;
        for (size_t i = from; i < to; ++i) s += " " + quote(files[i]);
        return s;
    }
    // Partials for files [0,2), [2,6) written by report --partial.
    std::vector<std::string> partials() {
        const auto files = rankFiles();
        const auto a = path("a.partial.json"), b = path("b.partial.json");
        if (!fs::exists(a)) {
            auto r = run("report --partial -o " + quote(a) + joined(files, 0, 2));
            EXPECT_EQ(r.code, 0) << r.err;
            r = run("report --partial --jobs 2 -o " + quote(b) + joined(files, 2, 6));
            EXPECT_EQ(r.code, 0) << r.err;
        }
        return {a, b};
    }
};

}  // namespace

TEST_F(MultiRank, PartialsMergeIntoTheReportOfTheCapturesByteForByte) {
    const auto files = rankFiles();
    const auto parts = partials();
    for (const std::string format : {"json", "text", "markdown"}) {
        const std::string opts = " --format " + format + " --steps --collectives --interference --top 0";
        const auto want = run("report" + opts + joined(files, 0, 6));
        ASSERT_EQ(want.code, 0) << want.err;
        const auto merged = run("merge" + opts + " " + quote(parts[0]) + " " + quote(parts[1]));
        ASSERT_EQ(merged.code, 0) << merged.err;
        EXPECT_EQ(merged.out, want.out) << format;
        // The partials of a directory, in name order: the same job.
        fs::create_directories(path("parts"));
        fs::copy_file(parts[0], path("parts/0.partial.json"), fs::copy_options::overwrite_existing);
        fs::copy_file(parts[1], path("parts/1.partial.json"), fs::copy_options::overwrite_existing);
        EXPECT_EQ(run("merge" + opts + " " + quote(path("parts"))).out, want.out) << format;
    }
    // --align is the merge's to choose: the same as aligning the captures.
    const auto aligned = run("report --format json --align collectives" + joined(files, 0, 6));
    const auto alignedMerge = run("merge --format json --align collectives " + quote(parts[0]) + " " + quote(parts[1]));
    ASSERT_EQ(alignedMerge.code, 0) << alignedMerge.err;
    EXPECT_EQ(alignedMerge.out, aligned.out);
    EXPECT_NE(alignedMerge.out.find("\"clock_shift_ns\""), std::string::npos);
    // The JSON names the captures each partial was made from.
    const auto j = nlohmann::json::parse(run("merge --format json " + quote(parts[0]) + " " + quote(parts[1])).out);
    ASSERT_EQ(j["inputs"].size(), 6u);
    EXPECT_EQ(j["inputs"][5], files[5]);
    EXPECT_EQ(j["devices"].size(), 6u);
    EXPECT_GT(j["matched_collectives"].size(), 0u);
    EXPECT_FALSE(j["devices"][0]["totals"]["comm_wait_ns"].is_null());
}

// Issue 18's cross-rank results through `report --partial` (one partial per
// rank) and `merge`: point-to-point pairs, the pipeline bubble over all
// stages, all-to-all exchanges and their findings, and the gates on them.
TEST_F(MultiRank, PipelineAndAllToAllPartialsMergeIntoTheReportOfTheCaptures) {
    struct Job {
        std::string name, synth, options, gate;
        int gateCode;
    };
    const std::vector<Job> jobs = {
        // --pipeline-stages: a setting every partial records and the merge uses.
        {"pp", "--workload pipeline --steps 2 --transfer-ns 20000 --slow-stage 2 --slow-factor 1.5",
         " --pipeline-stages 6", "--max-bubble-share 0.25", 1},
        {"moe", "--workload alltoall --imbalance 3 --hot-rank 1", "", "--max-alltoall-imbalance 1.2", 1},
    };
    for (const auto& job : jobs) {
        SCOPED_TRACE(job.name);
        const auto dir = path(job.name);
        ASSERT_EQ(run("synth -o " + quote(dir) + " " + job.synth).code, 0);
        std::vector<std::string> files;
        for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        const auto parts = path(job.name + "_parts");
        fs::create_directories(parts);
        for (size_t i = 0; i < files.size(); ++i) {
            const auto r = run("report --partial" + job.options + " -o " +
                               quote(parts + "/" + std::to_string(i) + ".partial.json") + " " + quote(files[i]));
            ASSERT_EQ(r.code, 0) << r.err;
        }
        for (const std::string format : {"json", "text", "markdown"}) {
            const std::string opts = " --format " + format + " --steps --collectives --interference --top 0";
            const auto want = run("report" + opts + job.options + joined(files, 0, files.size()));
            ASSERT_EQ(want.code, 0) << want.err;
            const auto merged = run("merge" + opts + " " + quote(parts));
            ASSERT_EQ(merged.code, 0) << merged.err;
            EXPECT_EQ(merged.out, want.out) << format;
            if (format != "json") continue;
            // The job really has what this test is about.
            const auto j = nlohmann::json::parse(merged.out);
            if (job.name == "pp") {
                EXPECT_FALSE(j["pipeline"].empty());
                EXPECT_FALSE(j["p2p_transfers"].empty());
                EXPECT_EQ(j["settings"]["pipeline_stages"], 6);
                EXPECT_NE(merged.out.find("\"pipeline-bubble\""), std::string::npos);
            } else {
                EXPECT_FALSE(j["alltoall"].empty());
                EXPECT_NE(merged.out.find("\"alltoall-imbalance\""), std::string::npos);
            }
        }
        // The gate on the partials and on the merged report: the captures' outcome.
        const auto mergedJson = path(job.name + "_merged.json");
        ASSERT_EQ(run("merge --format json -o " + quote(mergedJson) + " " + quote(parts)).code, 0);
        const auto want = run("check " + job.gate + job.options + " " + quote(dir));
        EXPECT_EQ(want.code, job.gateCode) << want.out << want.err;
        for (const auto& input : {parts, mergedJson}) {
            const auto r = run("check " + job.gate + " " + quote(input));
            EXPECT_EQ(r.code, want.code) << input << ": " << r.err;
            EXPECT_EQ(r.out, want.out) << input;
        }
    }
    // Partials of one job made with different pipeline settings do not add up.
    const auto other = path("pp_other.partial.json");
    const auto stage0 = fs::directory_iterator(path("pp"))->path().string();
    ASSERT_EQ(run("report --partial --pipeline-stages 3 -o " + quote(other) + " " + quote(stage0)).code, 0);
    const auto r = run("merge " + quote(path("pp_parts/1.partial.json")) + " " + quote(other));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("--pipeline-stages"), std::string::npos) << r.err;
}

TEST_F(MultiRank, WorkersAndDirectoriesGiveOneAnswer) {
    const auto d = job();
    const auto one = run("report --format json --jobs 1 " + quote(d));
    ASSERT_EQ(one.code, 0) << one.err;
    EXPECT_EQ(run("report --format json --jobs 3 " + quote(d)).out, one.out);
    EXPECT_EQ(run("report --format json " + quote(d)).out, one.out);
    EXPECT_EQ(run("report --align collectives --jobs 1 " + quote(d)).out,
              run("report --align collectives --jobs 4 " + quote(d)).out);
    const auto bad = run("report --jobs -1 " + quote(d));
    EXPECT_EQ(bad.code, 2) << bad.err;
}

TEST_F(MultiRank, CheckAndDiffReadPartialsAndMergedReports) {
    const auto d = job();
    const auto parts = partials();
    const std::string both = quote(parts[0]) + " " + quote(parts[1]);
    const auto merged = path("merged.json");
    ASSERT_EQ(run("merge --format json -o " + quote(merged) + " " + both).code, 0);
    for (const std::string thresholds : {"--min-overlap-ratio 0.5 --max-delay-caused-ms 1000",
                                         "--min-overlap-ratio 0.999 --max-exposed-transfer-ms 0.001"}) {
        const auto want = run("check " + thresholds + " " + quote(d));
        EXPECT_LE(want.code, 1) << want.err;
        const auto fromPartials = run("check " + thresholds + " " + both);
        const auto fromMerged = run("check " + thresholds + " " + quote(merged));
        EXPECT_EQ(fromPartials.code, want.code) << fromPartials.err;
        EXPECT_EQ(fromPartials.out, want.out);
        EXPECT_EQ(fromMerged.code, want.code) << fromMerged.err;
        EXPECT_EQ(fromMerged.out, want.out);
    }
    // A merged report, a directory of partials, a partial and the captures:
    // the same run, no change at all.
    fs::create_directories(path("parts"));
    fs::copy_file(parts[0], path("parts/0.partial.json"));
    fs::copy_file(parts[1], path("parts/1.partial.json"));
    for (const auto& [base, candidate] :
         std::vector<std::pair<std::string, std::string>>{{merged, d}, {path("parts"), d}, {parts[1], parts[1]}}) {
        const auto r = run("diff --format json --fail-on-regression 0 " + quote(base) + " " + quote(candidate));
        ASSERT_EQ(r.code, 0) << base << " vs " << candidate << ": " << r.err << r.out;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["worst_regression_pct"], 0) << r.out;
    }
}

TEST_F(MultiRank, MixedOrMisplacedInputsAreOneLineExitTwo) {
    const auto files = rankFiles();
    const auto parts = partials();
    const auto merged = path("merged.json");
    ASSERT_EQ(run("merge --format json -o " + quote(merged) + " " + quote(parts[0])).code, 0);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"report " + quote(parts[0]), "merge"},
        {"report " + quote(merged), "check"},
        {"merge " + quote(files[0]), "not a partial result"},
        {"merge " + quote(path("job")), "no partial results"},
        {"check --min-overlap-ratio 0.1 " + quote(parts[0]) + " " + quote(files[1]), "not a mix"},
        {"report --partial --format json " + quote(files[0]), "merge"},
        {"report --partial --collectives " + quote(files[0]), "merge"},
        {"report --partial -o " + quote(parts[0]) + " " + quote(files[0]), "--force"},
        // What-if and export work kernel by kernel: a partial cannot serve them.
        {"whatif " + quote(parts[0]), "need the captures"},
        {"export -o " + quote(path("trace.json")) + " " + quote(parts[0]), "need the captures"},
    };
    for (const auto& [args, what] : cases) {
        const auto r = run(args);
        EXPECT_EQ(r.code, 2) << args << ": " << r.err;
        EXPECT_EQ(lineCount(r.err), 1u) << args << ": " << r.err;
        EXPECT_NE(r.err.find(what), std::string::npos) << args << ": " << r.err;
    }
    // A partial cut short (an interrupted copy) is refused, naming it.
    const auto cut = path("cut.partial.json");
    const std::string text = slurp(parts[1]);
    { std::ofstream(cut, std::ios::binary) << text.substr(0, text.size() * 2 / 3); }
    const auto r = run("merge " + quote(cut));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
}

TEST_F(MultiRank, ProgressOfFilesAndDevicesOnATerminalOnly) {
    const auto d = job();
    const auto out = path("report.json");
    // stderr (and stdin) on a pseudo-terminal, stdout to a file.
    int master = -1;
    const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::execl(OSC_CLI_PATH, OSC_CLI_PATH, "report", "--format", "json", "--jobs", "1", "-o", out.c_str(), d.c_str(),
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    std::string seen;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(master, buf, sizeof buf);
        if (n <= 0) break;  // EIO once the child has closed the terminal
        seen.append(buf, static_cast<size_t>(n));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(master);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << seen;
    EXPECT_NE(seen.find("analyzing: 1/6 files"), std::string::npos) << seen;
    EXPECT_NE(seen.find("files/s"), std::string::npos) << seen;
    EXPECT_NE(seen.find("left"), std::string::npos) << seen;
    EXPECT_NE(seen.find("merging: "), std::string::npos) << seen;
    EXPECT_NE(seen.find("devices"), std::string::npos) << seen;
    EXPECT_EQ(nlohmann::json::parse(slurp(out))["devices"].size(), 6u);
    // Not a terminal: nothing but the report.
    const auto r = run("report --format json " + quote(d));
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.err, "");
}

// docs/design.md 4d end to end. Rank 2's host loads data for 4.1 ms before
// step 1: at the step's first AllReduce it is 4.1 ms later than the median
// rank, all of it host-bound in `DataLoader.__next__`. Every AllReduce moves
// 32 MiB on 4 ranks in 1,362,177 ns of transfer: bus bandwidth 1.5 x 24.63 =
// 36.95 GB/s, 8.2 % of the synthetic H100 SXM's 450 GB/s.
TEST_F(MultiRank, StragglerAndBusBandwidthFromCapturesAndPartials) {
    const auto d = path("stall");
    ASSERT_EQ(run("synth -o " + quote(d) +
                  " --ranks 4 --steps 3 --host-stall-rank 2 --host-stall-ns 4100000 --host-stall-step 1")
                  .code,
              0);
    auto r = run("report --format json " + quote(d));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["devices"].size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
        const auto& dev = j["devices"][i];
        EXPECT_EQ(dev["straggler"].is_null(), i != 2) << i;
        EXPECT_EQ(dev["busbw"]["peak_busbw_gbps"], 450.0) << i;
        EXPECT_NEAR(dev["busbw"]["median_busbw_gbps"].get<double>(), 1.5 * 33'554'432.0 / 1'362'177.0, 1e-9) << i;
    }
    const auto& worst = j["devices"][2]["straggler"]["worst"];
    EXPECT_EQ(worst["late_ns"], 4'100'000);
    EXPECT_EQ(worst["host_idle_ns"], 4'100'000);
    EXPECT_EQ(worst["step"], "step 1");
    EXPECT_EQ(worst["host"][0]["name"], "DataLoader.__next__");

    r = run("report " + quote(d));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("rank 2 gpu 2: arrived 4.100 ms late at AllReduce #3 of step 1"), std::string::npos) << r.out;

    // check: the lateness and the link, with their thresholds on both sides.
    r = run("check --max-straggler-delay-ms 4 " + quote(d));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(lineCount(r.out), 1u) << r.out;
    EXPECT_EQ(r.out.rfind("FAIL rank 2 gpu 2: ", 0), 0u) << r.out;
    EXPECT_EQ(run("check --max-straggler-delay-ms 4.2 " + quote(d)).code, 0);
    r = run("check --min-busbw-fraction 0.09 " + quote(d));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(lineCount(r.out), 4u) << r.out;
    EXPECT_EQ(run("check --min-busbw-fraction 0.08 " + quote(d)).code, 0);
    // Against a 40 GB/s network instead: 36.95 / 40 = 0.92.
    EXPECT_EQ(run("check --min-busbw-fraction 0.9 --peak-busbw-gbps 40 " + quote(d)).code, 0);
    EXPECT_EQ(run("check --min-busbw-fraction 0.93 --peak-busbw-gbps 40 " + quote(d)).code, 1);

    // Partials merge into the same answer.
    const auto part = path("stall.partial.json");
    ASSERT_EQ(run("report --partial -o " + quote(part) + " " + quote(d)).code, 0);
    r = run("merge --format json " + quote(part));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto m = nlohmann::json::parse(r.out);
    EXPECT_EQ(m["devices"][2]["straggler"], j["devices"][2]["straggler"]);
    EXPECT_EQ(m["devices"][0]["busbw"], j["devices"][0]["busbw"]);

    // Bad values are usage errors.
    for (const std::string bad : {"report --peak-busbw-gbps -1 ", "report --peak-busbw-gbps 0 ",
                                  "check --min-busbw-fraction 1.5 ", "check --max-straggler-delay-ms -1 "}) {
        r = run(bad + quote(d));
        EXPECT_EQ(r.code, 2) << bad << r.out;
        const std::string first = r.err.substr(0, r.err.find('\n'));
        EXPECT_NE(first.find(bad.substr(bad.find("--"), bad.find(' ', bad.find("--")) - bad.find("--"))),
                  std::string::npos)
            << bad << r.err;
        EXPECT_LT(first.size(), 120u) << first;
    }
}

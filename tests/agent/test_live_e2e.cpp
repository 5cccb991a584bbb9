// Live metrics and step captures end to end, without a GPU: the real
// `overlapscope` runs fake_job with the fake agent library playing the paced
// training job (agent/fake/paced_training.h), whose ranks are at the same
// step at the same moment as a synchronous job's are.
#include "tests/agent/live_brute_force.h"
#include "tests/agent/live_fixture.h"

#include <regex>
#include <set>

namespace osc::agent {
namespace {

TEST_F(LiveEndToEnd, MetricsFileAndPortWithoutACaptureFile) {
    const int port = freePort();
    const std::string metricsDir = dir / "textfile";
    ::mkdir(metricsDir.c_str(), 0700);
    auto r = run({"--metrics-file", metricsDir, "--metrics-port", std::to_string(port), "--job", "train-7"},
                 {"30", "0"}, {{"RANK", "3"}});
    ASSERT_EQ(agents(1).size(), 1u) << r->output();
    const std::string served = [&] {
        std::string s;
        test::waitUntil(
            [&] {
                s = scrape(port);
                return sampleValue(s, "overlapscope_steps_total") >= 3;
            },
            20);
        return s;
    }();
    ASSERT_NE(served.find("HTTP/1.1 200 OK"), std::string::npos) << served;
    const std::string labels = R"({rank="3",host=")";
    EXPECT_NE(served.find("overlapscope_overlap_ratio" + labels), std::string::npos) << served;
    EXPECT_NE(served.find(R"(gpu="0",job="train-7"} )"), std::string::npos) << served;
    // The paced job's step, as the brute force would say: compute 60 % of the
    // step, all-reduce 40 %, half of it under compute.
    EXPECT_DOUBLE_EQ(sampleValue(served, "overlapscope_overlap_ratio"), 0.5);
    EXPECT_NEAR(sampleValue(served, "overlapscope_step_seconds"), 0.020, 1e-9);
    EXPECT_NEAR(sampleValue(served, "overlapscope_exposed_comm_seconds"), 0.005, 1e-9);
    EXPECT_DOUBLE_EQ(sampleValue(served, "overlapscope_comm_bytes"), 2 * 4194304.0);
    // AllReduce over 2 ranks: factor 1; 8 MiB in 10 ms.
    EXPECT_NEAR(sampleValue(served, "overlapscope_bus_bandwidth_bytes_per_second"), 2 * 4194304.0 / 0.010, 1);

    // The file: one per process in the collector's directory, rewritten at
    // least once a second.
    const auto files = test::filesIn(metricsDir, ".prom");
    ASSERT_EQ(files.size(), 1u);
    EXPECT_NE(files[0].find("-rank3.prom"), std::string::npos) << files[0];
    std::set<double> updates;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(3300);
    while (std::chrono::steady_clock::now() < until) {
        const double t = sampleValue(readFile(files[0]), "overlapscope_agent_last_update_timestamp_seconds");
        if (!std::isnan(t)) updates.insert(t);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GE(updates.size(), 3u);
    const std::string text = readFile(files[0]);
    EXPECT_GT(sampleValue(text, "overlapscope_steps_total"), sampleValue(served, "overlapscope_steps_total"));
    EXPECT_DOUBLE_EQ(sampleValue(text, "overlapscope_incomplete_steps_total"), 0);

    const auto s = status(agents(1)[0].pid);
    EXPECT_EQ(s.state, "live");
    EXPECT_TRUE(s.streaming);
    EXPECT_TRUE(s.telemetry);
    ::kill(r->pid(), SIGINT);
    EXPECT_EQ(r->waitExitCode(), 128 + SIGINT) << r->output();
    EXPECT_TRUE(test::filesIn(out).empty());                  // no capture unless asked
    EXPECT_TRUE(test::filesIn(metricsDir, ".prom").empty());  // no stale file left
}

// Two ranks, dormant; `attach --steps` must capture the same step numbers on
// both, exactly that many, and each step's live figures must be the brute
// force over the rows of the file written for it.
TEST_F(LiveEndToEnd, AttachStepsCapturesTheSameWholeStepsOnEveryRank) {
    const int devices = 2;
    std::vector<std::unique_ptr<Child>> ranks;
    for (int rank = 0; rank < 2; ++rank)
        ranks.push_back(run({"--dormant"}, {"60", "0"},
                            {{"RANK", std::to_string(rank)},
                             {"OVERLAPSCOPE_FAKE_DEVICES", std::to_string(devices)},
                             {"OVERLAPSCOPE_FAKE_DEVICE_SKEW_MS", "1"},
                             {"OVERLAPSCOPE_STEP_LOG", dir / ("steps" + std::to_string(rank) + ".jsonl")}},
                            "run" + std::to_string(rank) + ".log"));
    const auto found = agents(2);
    ASSERT_EQ(found.size(), 2u);
    for (const auto& a : found) EXPECT_FALSE(a.reply.status.streaming);  // dormant: CUPTI untouched

    auto [code, text] = cli({"attach", "--all", "--steps", "6", "--partial"});
    ASSERT_EQ(code, 0) << text;
    // `ps` follows the captures to the end.
    std::set<std::string> states;
    ASSERT_TRUE(test::waitUntil(
        [&] {
            auto [psCode, psOut] = cli({"ps", "--json"});
            const auto list = nlohmann::json::parse(psOut);
            bool done = list.size() == 2;
            for (const auto& a : list) {
                const std::string st = a.contains("step_capture") ? a["step_capture"]["state"].get<std::string>() : "";
                states.insert(st);
                done = done && st == "done";
            }
            return done;
        },
        30));
    EXPECT_TRUE(states.count("waiting") || states.count("capturing")) << "ps never showed a capture in progress";
    // The agents stop recording once done (nothing else wants the stream).
    for (const auto& a : found) EXPECT_TRUE(test::waitUntil([&] { return !status(a.pid).streaming; }, 10));
    auto [psCode, psOut] = cli({"ps"});
    EXPECT_NE(psOut.find("done 6/6@"), std::string::npos) << psOut;

    const auto captures = test::filesIn(out);
    ASSERT_EQ(captures.size(), 2u) << text;
    std::vector<std::vector<int64_t>> numbers;
    for (size_t rank = 0; rank < captures.size(); ++rank) {
        const Capture cap = loadCapture(captures[rank]);
        const test::BruteRows rows = test::bruteRowsOf(cap);
        std::vector<int64_t> n;
        for (const auto& s : rows.steps) n.push_back(s.number);
        std::sort(n.begin(), n.end());
        ASSERT_EQ(n.size(), 6u) << captures[rank];
        for (size_t i = 1; i < n.size(); ++i) EXPECT_EQ(n[i], n[i - 1] + 1);
        numbers.push_back(n);
        const int r = cap.processes.at(0).rank;
        const auto log = stepLog(dir / ("steps" + std::to_string(r) + ".jsonl"));
        for (const auto& s : rows.steps) {
            for (uint32_t d = 0; d < devices; ++d) {
                const std::string where =
                    "rank " + std::to_string(r) + " step " + std::to_string(s.number) + " device " + std::to_string(d);
                ASSERT_TRUE(log.count(s.number) && log.at(s.number).count(d)) << where;
                const auto& live = log.at(s.number).at(d);
                const test::BruteStep b = test::bruteStep(rows, s, d);
                EXPECT_EQ(live["window_ns"].get<int64_t>(), b.window) << where;
                EXPECT_EQ(live["compute_ns"].get<int64_t>(), b.compute) << where;
                EXPECT_EQ(live["comm_ns"].get<int64_t>(), b.comm) << where;
                EXPECT_EQ(live["overlap_ns"].get<int64_t>(), b.overlap) << where;
                EXPECT_EQ(live["exposed_comm_ns"].get<int64_t>(), b.exposed) << where;
                EXPECT_EQ(live["wait_ns"].get<int64_t>(), b.wait) << where;
                EXPECT_EQ(live["bytes"].get<uint64_t>(), b.bytes) << where;
                EXPECT_EQ(live["transfer_ns"].get<int64_t>(), b.transfer) << where;
                EXPECT_TRUE(live["complete"].get<bool>()) << where;
            }
        }
        EXPECT_EQ(cap.processes[0].meta.at("step_capture_steps_written"), "6");
    }
    EXPECT_EQ(numbers[0], numbers[1]) << "the ranks captured different steps";
    // The partials merge into the report of the captures.
    const auto partials = test::filesIn(out, ".partial.json");
    ASSERT_EQ(partials.size(), 2u);
    auto [m, mOut] = cli({"merge", out, "--format", "json", "-o", dir / "merged.json"});
    EXPECT_EQ(m, 0) << mOut;
    auto [rep, repOut] = cli({"report", "--format", "json", "-o", dir / "report.json", captures[0], captures[1]});
    EXPECT_EQ(rep, 0) << repOut;
    auto merged = nlohmann::json::parse(readFile(dir / "merged.json"));
    auto report = nlohmann::json::parse(readFile(dir / "report.json"));
    merged.erase("inputs");
    report.erase("inputs");
    EXPECT_EQ(merged, report);

    // A step that has passed is refused, one line per agent.
    auto [late, lateOut] = cli({"attach", "--all", "--steps", "2", "--at-step", std::to_string(numbers[0][0])});
    EXPECT_EQ(late, 1) << lateOut;
    EXPECT_NE(lateOut.find("has passed here"), std::string::npos) << lateOut;
    for (auto& r : ranks) ::kill(r->pid(), SIGINT);
}

// The overhead benchmark has the fake GPU wake once a millisecond (its
// records come late, in batches); the steps must still be the paced truth.
TEST_F(LiveEndToEnd, AFakeGpuWakingInBatchesGivesTheSameSteps) {
    const int port = freePort();
    auto r = run({"--metrics-port", std::to_string(port)}, {"30", "0"}, {{"OVERLAPSCOPE_FAKE_WAKE_MS", "5"}});
    ASSERT_EQ(agents(1).size(), 1u) << r->output();
    std::string served;
    test::waitUntil(
        [&] {
            served = scrape(port);
            return sampleValue(served, "overlapscope_steps_total") >= 5;
        },
        20);
    EXPECT_DOUBLE_EQ(sampleValue(served, "overlapscope_overlap_ratio"), 0.5) << served;
    EXPECT_NEAR(sampleValue(served, "overlapscope_step_seconds"), 0.020, 1e-9);
    EXPECT_NEAR(sampleValue(served, "overlapscope_exposed_comm_seconds"), 0.005, 1e-9);
    EXPECT_DOUBLE_EQ(sampleValue(served, "overlapscope_incomplete_steps_total"), 0);
    EXPECT_DOUBLE_EQ(sampleValue(served, "overlapscope_agent_late_rows_total"), 0);
    ::kill(r->pid(), SIGINT);
    EXPECT_EQ(r->waitExitCode(), 128 + SIGINT) << r->output();
}

TEST_F(LiveEndToEnd, AJobWithoutStepRangesGetsAClearError) {
    auto r = run({"--dormant"}, {"30", "0"}, {{"OVERLAPSCOPE_STEP_PATTERN", "^no step is named like this$"}});
    ASSERT_EQ(agents(1).size(), 1u) << r->output();
    auto [code, text] = cli({"attach", "--all", "--steps", "3", "--timeout", "2"});
    EXPECT_EQ(code, 1) << text;
    EXPECT_NE(text.find("no step ranges in 2 s of GPU activity"), std::string::npos) << text;
    EXPECT_NE(text.find("ProfilerStep#N"), std::string::npos) << text;
    EXPECT_TRUE(test::filesIn(out).empty());
    ::kill(r->pid(), SIGINT);
}

// --capture-when captures the step that made the condition hold and the
// look-back ring's steps before it (issue 41: not only the steps after).
TEST_F(LiveEndToEnd, CaptureWhenWritesTheRingAndTheNextStepsOnceWhileTheConditionHolds) {
    // The paced step's exposed communication is a quarter of its window.
    auto yes = run({"--metrics-file", dir / "m.prom", "--capture-when", "exposed_comm_ratio>0.2 for 5 steps",
                    "--capture-steps", "3", "--lookback", "4", "--partial"},
                   {"2.5", "0"}, {{"OVERLAPSCOPE_STEP_LOG", dir / "steps.jsonl"}});
    EXPECT_EQ(yes->waitExitCode(), 0) << yes->output();
    auto captures = test::filesIn(out);
    ASSERT_EQ(captures.size(), 1u) << yes->output();  // once: the cooldown (600 s) holds the rest
    const Capture cap = loadCapture(captures[0]);
    const auto rows = test::bruteRowsOf(cap);
    const auto log = stepLog(dir / "steps.jsonl");
    ASSERT_GE(log.size(), 8u);
    // The condition held at the fifth step measured; the ring held it and
    // the three before (--lookback 4); then the next three.
    std::vector<int64_t> expected;
    for (auto it = std::next(log.begin(), 1); it != std::next(log.begin(), 5); ++it) expected.push_back(it->first);
    const int64_t fifth = expected.back();
    for (int64_t k = 1; k <= 3; ++k) expected.push_back(fifth + k);
    std::vector<int64_t> n;
    for (const auto& s : rows.steps) n.push_back(s.number);
    std::sort(n.begin(), n.end());
    EXPECT_EQ(n, expected);
    EXPECT_EQ(cap.processes[0].meta.at("step_capture_trigger"), "capture-when");
    EXPECT_EQ(cap.processes[0].meta.at("step_capture_steps_written"), "7");
    EXPECT_EQ(test::filesIn(out, ".partial.json").size(), 1u);
    // Each step's rows are the ones its live figures were measured on.
    for (const auto& s : rows.steps) {
        const test::BruteStep b = test::bruteStep(rows, s, 0);
        EXPECT_EQ(log.at(s.number).at(0)["window_ns"].get<int64_t>(), b.window) << s.number;
        EXPECT_EQ(log.at(s.number).at(0)["exposed_comm_ns"].get<int64_t>(), b.exposed) << s.number;
    }

    std::filesystem::remove_all(out);
    auto no =
        run({"--metrics-file", dir / "m.prom", "--capture-when", "exposed_comm_ratio>0.3 for 5 steps"}, {"1.5", "0"});
    EXPECT_EQ(no->waitExitCode(), 0) << no->output();
    EXPECT_TRUE(test::filesIn(out).empty());
}

TEST_F(LiveEndToEnd, AWallClockCaptureDuringLiveMetricsAndTheMetricsGoOn) {
    const int port = freePort();
    auto r = run({"--metrics-port", std::to_string(port)}, {"30", "0"});
    const auto found = agents(1);
    ASSERT_EQ(found.size(), 1u) << r->output();
    ASSERT_TRUE(test::waitUntil([&] { return sampleValue(scrape(port), "overlapscope_steps_total") >= 3; }, 20));
    auto [a, aOut] = cli({"attach", std::to_string(found[0].pid), "--duration", "0.5"});
    EXPECT_EQ(a, 0) << aOut;
    EXPECT_TRUE(test::waitUntil([&] { return status(found[0].pid).state == "live"; }, 10));
    const double before = sampleValue(scrape(port), "overlapscope_steps_total");
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_GT(sampleValue(scrape(port), "overlapscope_steps_total"), before + 5);
    const auto captures = test::filesIn(out);
    ASSERT_EQ(captures.size(), 1u);
    EXPECT_GT(loadCapture(captures[0]).kernelCount(), 0u);
    ::kill(r->pid(), SIGINT);
}

TEST_F(LiveEndToEnd, BadLiveOptionsAreOneLineAndExit2) {
    const std::vector<std::vector<std::string>> bad = {
        {"run", "--metrics-port", "70000", "--", "true"},
        {"run", "--metrics-port", "80.5", "--", "true"},
        {"run", "--capture-when", "exposed>0.3", "--", "true"},
        {"run", "--capture-steps", "5", "--", "true"},
        {"run", "--metrics-address", "0.0.0.0", "--metrics-file", "x", "--", "true"},
        {"attach", "--all", "--at-step", "5"},
        {"attach", "--all", "--steps", "0"},
        {"attach", "--all", "--steps", "2.5"},
        {"attach", "--all", "--steps", "3", "--duration", "2"},
        {"attach", "--all", "--steps", "3", "--plan", "--at-step", "9"},
        // Issue 41: an empty value is refused, never read as "not given"...
        {"attach", "--all", "--steps", ""},
        {"run", "--metrics-port", "", "--", "true"},
        {"run", "--metrics-file", "", "--", "true"},
        {"ps", "--job", ""},
        {"dump", "--job", ""},
        // ...and an address that is no numeric address fails before the job starts.
        {"run", "--metrics-port", "1", "--metrics-address", "localhost", "--", "true"},
        {"run", "--metrics-port", "1", "--metrics-address", "10.0.0.300", "--", "true"},
        {"run", "--lookback", "1001", "--", "true"},
        {"run", "--trigger-dir", "/nonexistent/dir", "--lookback", "2", "--", "true"},
        {"run", "--trigger-dir", "/tmp", "--", "true"},
        {"attach", "1", "--all"},
    };
    for (const auto& args : bad) {
        auto [code, text] = cli(args);
        std::string joined;
        for (const auto& a : args) joined += a + " ";
        EXPECT_EQ(code, 2) << joined << "\n" << text;
        EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << joined << "\n" << text;
    }
}

// A job that simply returns from main while the agent publishes: the
// publisher's table of metric families was once built after the agent's exit
// handler was registered, so exit() destroyed it before the handler stopped
// the publisher, which then read freed memory (about one exit in fifty at
// the default period). With a 10 ms period and a stop that takes 100 ms,
// as a GPU's last flush may, the publisher renders ten times inside that
// window, so every run would crash.
TEST_F(LiveEndToEnd, AJobExitingWhileMetricsArePublishedExitsCleanly) {
    for (int i = 0; i < 4; ++i) {
        const std::string metrics = dir / ("m" + std::to_string(i) + ".prom");
        Child job({OSC_TEST_FAKE_JOB, "0.5", "0"},
                  env({{"CUDA_INJECTION64_PATH", OSC_TEST_FAKE_AGENT},
                       {"OVERLAPSCOPE_METRICS_FILE", metrics},
                       {"OVERLAPSCOPE_METRICS_PERIOD_MS", "10"},
                       {"OVERLAPSCOPE_DORMANT", "1"},
                       {"OVERLAPSCOPE_FAKE_KERNELS", "2000"},
                       {"OVERLAPSCOPE_FAKE_STEP_MS", "100"},
                       {"OVERLAPSCOPE_FAKE_STOP_MS", "100"}}),
                  dir / ("exit" + std::to_string(i) + ".log"));
        ASSERT_EQ(job.waitExitCode(30), 0) << "run " << i << ": " << job.output();
    }
}

}  // namespace
}  // namespace osc::agent

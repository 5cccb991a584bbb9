// `overlapscope run / attach / detach / ps` end to end, without a GPU: the
// real command-line program injects the fake agent library into fake_job,
// which loads it the way the CUDA driver does.
#include "analyzer/load/load_capture.h"
#include "control/control_client.h"
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <set>
#include <tuple>

namespace osc::agent {
namespace {

using test::Child;
using test::TempDir;

class AgentEndToEnd : public ::testing::Test {
protected:
    void SetUp() override {
        sockets = dir / "sock";
        out = dir / "out";
        ::setenv("OVERLAPSCOPE_SOCKET_DIR", sockets.c_str(), 1);  // for discovery from this process
    }
    void TearDown() override { ::unsetenv("OVERLAPSCOPE_SOCKET_DIR"); }

    std::map<std::string, std::string> env() const {
        std::map<std::string, std::string> e = {{"OVERLAPSCOPE_SOCKET_DIR", sockets},
                                                {"OVERLAPSCOPE_COMMIT_MS", "100"},
                                                {"OVERLAPSCOPE_FAKE_RATE", "20000"},
                                                {"CUDA_INJECTION64_PATH", ""},
                                                {"OVERLAPSCOPE_AGENT", ""}};
        for (const auto& [k, v] : extraEnv) e[k] = v;
        return e;
    }
    std::unique_ptr<Child> run(const std::vector<std::string>& runArgs, const std::vector<std::string>& job,
                               const std::string& log = "run.log") {
        std::vector<std::string> argv = {OSC_TEST_CLI, "run", "--agent", OSC_TEST_FAKE_AGENT, "-o", out};
        argv.insert(argv.end(), runArgs.begin(), runArgs.end());
        argv.push_back("--");
        argv.push_back(OSC_TEST_FAKE_JOB);
        argv.insert(argv.end(), job.begin(), job.end());
        return std::make_unique<Child>(argv, env(), dir / log);
    }
    // Runs the CLI to completion; returns {exit code, output}.
    std::pair<int, std::string> cli(const std::vector<std::string>& args) {
        std::vector<std::string> argv = {OSC_TEST_CLI};
        argv.insert(argv.end(), args.begin(), args.end());
        Child c(argv, env(), dir / ("cli" + std::to_string(++cliRuns) + ".log"));
        const int code = c.waitExitCode(60);
        return {code, c.output()};
    }
    // Waits for `count` agents to answer on the socket directory.
    std::vector<control::DiscoveredAgent> agents(size_t count) {
        std::vector<control::DiscoveredAgent> found;
        test::waitUntil([&] {
            found = control::discoverAgents(sockets);
            return found.size() >= count;
        });
        return found;
    }
    std::string state(int64_t pid) {
        return control::sendRequest(control::socketPathFor(sockets, pid), control::ControlRequest{}).status.state;
    }

    TempDir dir;
    std::string sockets, out;
    std::map<std::string, std::string> extraEnv;  // for the job and the CLI
    int cliRuns = 0;
};

int64_t clockNs(clockid_t clock) {
    timespec ts{};
    ::clock_gettime(clock, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

size_t lineCount(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST_F(AgentEndToEnd, RunCapturesAndReturnsTheJobsExitCode) {
    auto r = run({}, {"0.6", "7"});
    EXPECT_EQ(r->waitExitCode(), 7) << r->output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u) << r->output();
    const Capture cap = loadCapture(files[0]);
    ASSERT_EQ(cap.processes.size(), 1u);
    EXPECT_GT(cap.kernelCount(), 100u);
    EXPECT_EQ(cap.processes[0].meta.at("end_reason"), "process_exit");
    EXPECT_NE(cap.processes[0].meta.at("command_line").find("fake_job 0.6 7"), std::string::npos);
    EXPECT_EQ(test::filesIn(sockets, ".sock").size(), 0u);  // the agent removed its socket at exit
}

// Issue 49 item 5: the disk fills up as the capture starts (a file size
// limit plays it, as in test_agent_session.cpp): the agent's file keeps its
// start metadata, no activity and no end_reason. `report` on it alone has
// nothing to report (one line naming it, exit 2); beside a good capture it
// names it in the text report, the JSON's warnings and on stderr.
TEST_F(AgentEndToEnd, ReportOnACaptureWhoseDiskFilledSaysItSavedNothing) {
    extraEnv["OVERLAPSCOPE_FAKE_RATE"] = "2000000";  // the first commit of records is megabytes
    std::unique_ptr<Child> job;
    {
        test::FileSizeLimit limit(2u << 20);  // the empty capture (1.6 MB) fits
        job = run({}, {"0.5", "0"});
    }
    EXPECT_EQ(job->waitExitCode(), 0) << job->output();
    const auto full = test::filesIn(out);
    ASSERT_EQ(full.size(), 1u) << job->output();
    const Capture kept = loadCapture(full[0]);
    EXPECT_EQ(kept.kernelCount(), 0u);
    EXPECT_EQ(kept.processes.size(), 1u);
    const std::string said = full[0] + ": the capture did not finish and saved nothing";

    for (const char* format : {"text", "json"}) {
        auto [code, text] = cli({"report", "--format", format, full[0]});
        EXPECT_EQ(code, 2) << text;
        EXPECT_EQ(lineCount(text), 1u) << text;
        EXPECT_EQ(text.rfind("overlapscope: " + said, 0), 0u) << text;
        EXPECT_NE(text.find("nothing to report"), std::string::npos) << text;
    }

    // Beside a capture that holds something.
    out = dir / "good";
    extraEnv.erase("OVERLAPSCOPE_FAKE_RATE");
    auto good = run({}, {"0.3", "0"}, "good.log");
    EXPECT_EQ(good->waitExitCode(), 0) << good->output();
    ASSERT_EQ(test::filesIn(out).size(), 1u) << good->output();
    const std::string both = dir / "report.txt", json = dir / "report.json";
    auto [code, err] = cli({"report", "-o", both, full[0], test::filesIn(out)[0]});
    EXPECT_EQ(code, 0) << err;
    EXPECT_NE(err.find("overlapscope: warning: " + said), std::string::npos) << err;
    std::ifstream text(both);
    std::string first, second;
    std::getline(text, first);
    std::getline(text, second);
    EXPECT_EQ(first.rfind("overlapscope report: 1 device from ", 0), 0u) << first;
    EXPECT_EQ(second.rfind("warning: " + said, 0), 0u) << second;
    std::tie(code, err) = cli({"report", "--format", "json", "-o", json, full[0], test::filesIn(out)[0]});
    EXPECT_EQ(code, 0) << err;
    const auto report = nlohmann::json::parse(std::ifstream(json));
    EXPECT_EQ(report["devices"].size(), 1u);
    ASSERT_FALSE(report["warnings"].empty());
    EXPECT_EQ(report["warnings"][0].get<std::string>().rfind(said, 0), 0u) << report["warnings"];
}

TEST_F(AgentEndToEnd, DurationEndsTheCaptureBeforeTheJob) {
    auto r = run({"--duration", "0.3"}, {"1.5", "0"});
    EXPECT_EQ(r->waitExitCode(), 0) << r->output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    const auto meta = loadCapture(files[0]).processes.at(0).meta;
    EXPECT_EQ(meta.at("end_reason"), "stopped");  // by the duration, not at exit
    // From before the file is created to after it is closed: under load that
    // adds most of a second to the 0.3 s, but never as much as the job's 1.5 s.
    const double seconds =
        (std::stod(meta.at("capture_stop_utc_ns")) - std::stod(meta.at("capture_start_utc_ns"))) / 1e9;
    EXPECT_GT(seconds, 0.25);
    EXPECT_LT(seconds, 1.5);
}

TEST_F(AgentEndToEnd, DormantThenAttachDetachAndAttachAgain) {
    auto r = run({"--dormant"}, {"30", "0"});
    auto found = agents(1);
    ASSERT_EQ(found.size(), 1u) << r->output();
    const int64_t pid = found[0].pid;
    EXPECT_EQ(found[0].reply.status.state, "dormant");
    EXPECT_TRUE(test::filesIn(out).empty());

    auto [psCode, psOut] = cli({"ps"});
    EXPECT_EQ(psCode, 0);
    EXPECT_NE(psOut.find(std::to_string(pid)), std::string::npos) << psOut;
    EXPECT_NE(psOut.find("dormant"), std::string::npos) << psOut;
    auto [jsonCode, jsonOut] = cli({"ps", "--json"});
    EXPECT_EQ(jsonCode, 0);
    EXPECT_NE(jsonOut.find("\"pid\":" + std::to_string(pid)), std::string::npos) << jsonOut;
    EXPECT_NE(jsonOut.find("\"state\":\"dormant\""), std::string::npos) << jsonOut;

    auto [a1, a1Out] = cli({"attach", std::to_string(pid)});
    EXPECT_EQ(a1, 0) << a1Out;
    EXPECT_NE(a1Out.find("capturing to " + out), std::string::npos) << a1Out;
    EXPECT_EQ(state(pid), "capturing");
    auto [again, againOut] = cli({"attach", std::to_string(pid)});
    EXPECT_EQ(again, 1) << againOut;  // already capturing: refused, nothing changes
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto [d1, d1Out] = cli({"detach", std::to_string(pid)});
    EXPECT_EQ(d1, 0) << d1Out;
    EXPECT_NE(d1Out.find("stopped, wrote"), std::string::npos) << d1Out;
    EXPECT_EQ(state(pid), "stopped");
    ASSERT_EQ(test::filesIn(out).size(), 1u);
    const Capture first = loadCapture(test::filesIn(out)[0]);  // complete while the job runs on
    EXPECT_GT(first.kernelCount(), 0u);
    EXPECT_EQ(first.processes[0].meta.at("end_reason"), "stopped");

    auto [a2, a2Out] = cli({"attach", std::to_string(pid), "--duration", "0.3", "-o", dir / "second"});
    EXPECT_EQ(a2, 0) << a2Out;
    EXPECT_TRUE(test::waitUntil([&] { return state(pid) == "stopped"; }, 10));
    const auto second = test::filesIn(dir / "second");
    ASSERT_EQ(second.size(), 1u);
    EXPECT_NE(second[0].find("-2.sqlite"), std::string::npos) << second[0];
    EXPECT_GT(loadCapture(second[0]).kernelCount(), 0u);

    ::kill(static_cast<pid_t>(pid), SIGTERM);
    EXPECT_EQ(r->waitExitCode(), 128 + SIGTERM);
    EXPECT_EQ(test::filesIn(out).size(), 1u);  // no capture was running: no new file
}

// The H100 case (docs/measurements.md, "Attach twice"): the last launches of
// an `attach --duration` window ran on the GPU after the window closed. The
// fake GPU runs each kernel 100 ms after its launch, so about 300 are in
// flight when the duration ends; the default stop grace waits for them.
TEST_F(AgentEndToEnd, AttachForADurationKeepsTheKernelsOfItsLastLaunches) {
    extraEnv["OVERLAPSCOPE_FAKE_GPU_LATENCY_MS"] = "100";
    extraEnv["OVERLAPSCOPE_FAKE_RATE"] = "4000";
    auto r = run({"--dormant"}, {"30", "0"});
    auto found = agents(1);
    ASSERT_EQ(found.size(), 1u) << r->output();
    const int64_t pid = found[0].pid;
    auto [a, aOut] = cli({"attach", std::to_string(pid), "--duration", "0.4"});
    EXPECT_EQ(a, 0) << aOut;
    EXPECT_TRUE(test::waitUntil([&] { return state(pid) == "stopped"; }, 20));
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    const Capture cap = loadCapture(files[0]);
    const Process& p = cap.processes.at(0);
    std::set<uint32_t> launches, kernels;
    for (size_t i = 0; i < p.apiCalls.size(); ++i)
        if (cap.strings.at(p.apiCalls.name[i]).rfind("cudaLaunchKernel", 0) == 0)
            launches.insert(p.apiCalls.correlation[i]);
    for (const Device& d : p.devices) kernels.insert(d.kernels.correlation.begin(), d.kernels.correlation.end());
    EXPECT_GT(launches.size(), 100u);
    EXPECT_EQ(launches, kernels) << launches.size() << " launches, " << kernels.size() << " kernels";
    EXPECT_EQ(p.meta.at("end_reason"), "stopped");
    EXPECT_EQ(p.meta.at("stop_grace_ms"), "200");  // the default
    EXPECT_EQ(p.meta.at("stop_grace_unfinished_launches"), "0");
    ::kill(static_cast<pid_t>(pid), SIGTERM);
    EXPECT_EQ(r->waitExitCode(), 128 + SIGTERM);
}

TEST_F(AgentEndToEnd, TwoAgentsAtOnceWithAll) {
    auto r1 = run({"--dormant"}, {"30", "0"}, "run1.log");
    auto r2 = run({"--dormant"}, {"30", "0"}, "run2.log");
    auto found = agents(2);
    ASSERT_EQ(found.size(), 2u);
    // --now: each starts at once (this fake job's step numbers are its own,
    // so the default, one step number for all, does not apply to it).
    auto [a, aOut] = cli({"attach", "--all", "--now"});
    EXPECT_EQ(a, 0) << aOut;
    for (const auto& f : found) EXPECT_EQ(state(f.pid), "capturing");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto [d, dOut] = cli({"detach", "--all"});
    EXPECT_EQ(d, 0) << dOut;
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 2u);
    for (const auto& f : files) EXPECT_GT(loadCapture(f).kernelCount(), 0u) << f;
    const Capture both = loadCapture(out);  // the directory reads as one multi-process capture
    EXPECT_EQ(both.processes.size(), 2u);
    for (const auto& f : found) ::kill(static_cast<pid_t>(f.pid), SIGTERM);
    EXPECT_EQ(r1->waitExitCode(), 128 + SIGTERM);
    EXPECT_EQ(r2->waitExitCode(), 128 + SIGTERM);
}

// Issue 41: a rank that does not answer (its process stopped: SIGSTOP, a
// debugger) is listed by `ps` and named by `attach`, which exit 1 instead of
// leaving it out; and what was sent to it while it was stopped is dropped
// when it resumes, not acted on.
TEST_F(AgentEndToEnd, AStoppedRankIsListedNamedAndItsLateRequestsDropped) {
    auto r1 = run({"--dormant"}, {"60", "0"}, "run1.log");
    auto r2 = run({"--dormant"}, {"60", "0"}, "run2.log");
    auto found = agents(2);
    ASSERT_EQ(found.size(), 2u);
    const int64_t alive = found[0].pid, frozen = found[1].pid;
    ASSERT_EQ(::kill(static_cast<pid_t>(frozen), SIGSTOP), 0);
    extraEnv["OVERLAPSCOPE_ANSWER_TIMEOUT_MS"] = "500";  // the CLI's wait, shortened for the test
    const std::string silence = "pid " + std::to_string(frozen) + ": did not answer in 0.5 s (the process is stopped";

    auto [ps, psOut] = cli({"ps"});
    EXPECT_EQ(ps, 1) << psOut;
    EXPECT_NE(psOut.find(silence), std::string::npos) << psOut;
    EXPECT_NE(psOut.find(std::to_string(alive)), std::string::npos) << psOut;
    auto [psJson, psJsonOut] = cli({"ps", "--json"});
    EXPECT_EQ(psJson, 1);
    const auto list = nlohmann::json::parse(psJsonOut.substr(psJsonOut.find('[')));
    ASSERT_EQ(list.size(), 2u) << psJsonOut;
    for (const auto& a : list) EXPECT_EQ(a["answered"].get<bool>(), a["pid"].get<int64_t>() == alive) << a;

    const auto t0 = std::chrono::steady_clock::now();
    auto [all, allOut] = cli({"attach", "--all", "--now"});
    EXPECT_EQ(all, 1) << allOut;
    EXPECT_NE(allOut.find(silence), std::string::npos) << allOut;
    EXPECT_NE(allOut.find("not attached"), std::string::npos) << allOut;
    EXPECT_EQ(state(alive), "capturing");
    auto [one, oneOut] = cli({"attach", std::to_string(frozen)});
    EXPECT_EQ(one, 1) << oneOut;
    EXPECT_NE(oneOut.find(silence), std::string::npos) << oneOut;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20)
        << "attach waited for the stopped process";

    // A start its client gave up on while the process was stopped...
    control::ControlRequest start;
    start.command = control::ControlCommand::Start;
    EXPECT_THROW(control::sendRequest(control::socketPathFor(sockets, frozen), start, 500), control::NoAnswer);
    ASSERT_EQ(::kill(static_cast<pid_t>(frozen), SIGCONT), 0);
    // ...is dropped when it resumes: no capture starts minutes later.
    ASSERT_TRUE(test::waitUntil([&] { return state(frozen) == "dormant"; }, 10));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(state(frozen), "dormant");
    auto [d, dOut] = cli({"detach", "--all"});
    EXPECT_EQ(d, 1) << dOut;  // the resumed one has nothing to stop
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_NE(files[0].find("-" + std::to_string(alive)), std::string::npos) << files[0];
}

TEST_F(AgentEndToEnd, SigtermDuringCaptureClosesTheFileThenKillsTheJob) {
    auto r = run({}, {"30", "0"});
    auto found = agents(1);
    ASSERT_EQ(found.size(), 1u) << r->output();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    ::kill(static_cast<pid_t>(found[0].pid), SIGTERM);
    EXPECT_EQ(r->waitExitCode(), 128 + SIGTERM) << r->output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    const Capture cap = loadCapture(files[0]);
    EXPECT_EQ(cap.processes[0].meta.at("end_reason"), "signal");
    EXPECT_GT(cap.kernelCount(), 0u);
}

// Issue 47: CUPTI's close never returning (a mesh rank was SIGKILLed 30 s
// after SIGTERM inside it), played by a fake source whose stop takes 30 s.
// The agent gives up on it after its bound, closes the file without it,
// and the job dies of the signal as it would have.
TEST_F(AgentEndToEnd, SigtermWithAStuckSourceEndsWithinTheBound) {
    extraEnv["OVERLAPSCOPE_FAKE_STOP_MS"] = "30000";
    auto r = run({}, {"60", "0"});
    auto found = agents(1);
    ASSERT_EQ(found.size(), 1u) << r->output();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto t0 = std::chrono::steady_clock::now();
    ::kill(static_cast<pid_t>(found[0].pid), SIGTERM);
    EXPECT_EQ(r->waitExitCode(), 128 + SIGTERM) << r->output();
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // 2 s for the source, the exit drain's 1 s at most, the close.
    EXPECT_LT(took, 10.0) << "the close waited for the stuck source";
    EXPECT_NE(r->output().find("did not stop within 2000 ms"), std::string::npos) << r->output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    const Capture cap = loadCapture(files[0]);
    EXPECT_EQ(cap.processes[0].meta.at("end_reason"), "signal");
    EXPECT_EQ(cap.processes[0].meta.at("ignored_source_stop_gave_up"), "1");
    EXPECT_GT(cap.kernelCount(), 0u);
}

TEST_F(AgentEndToEnd, RunForwardsSigtermToTheJob) {
    auto r = run({}, {"30", "0"});
    ASSERT_EQ(agents(1).size(), 1u) << r->output();
    ::kill(r->pid(), SIGTERM);  // to `overlapscope run` itself
    EXPECT_EQ(r->waitExitCode(), 128 + SIGTERM) << r->output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(loadCapture(files[0]).processes[0].meta.at("end_reason"), "signal");
}

// At the default commit interval a killed job loses at most the last
// second (the worst moment is checked in CaptureSession tests).
TEST_F(AgentEndToEnd, SigkillLeavesAReadableFileMissingAtMostTheLastSecond) {
    extraEnv["OVERLAPSCOPE_COMMIT_MS"] = "1000";
    auto r = run({}, {"30", "0"});
    auto found = agents(1);
    ASSERT_EQ(found.size(), 1u) << r->output();
    std::this_thread::sleep_for(std::chrono::milliseconds(1700));
    const int64_t killedNs = clockNs(CLOCK_REALTIME);  // the fake source's clock
    ::kill(static_cast<pid_t>(found[0].pid), SIGKILL);
    EXPECT_EQ(r->waitExitCode(), 128 + SIGKILL);
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    const Capture cap = loadCapture(files[0]);
    ASSERT_GT(cap.kernelCount(), 0u);
    const auto& meta = cap.processes[0].meta;
    EXPECT_EQ(meta.count("end_reason"), 0u);  // it never ended cleanly
    TimeNs newest = 0;
    for (const auto& d : cap.processes[0].devices)
        for (size_t i = 0; i < d.kernels.size(); ++i) newest = std::max(newest, d.kernels.end[i]);
    const int64_t lostNs = killedNs - (std::stoll(meta.at("capture_start_source_ns")) + newest);
    EXPECT_LE(lostNs, 1'000'000'000) << "lost " << lostNs / 1e6 << " ms";
    auto [code, text] = cli({"report", files[0]});
    EXPECT_EQ(code, 0) << text;
    // The dead agent's socket is stale: `ps` removes it and lists nobody.
    auto [psCode, psOut] = cli({"ps"});
    EXPECT_EQ(psCode, 0);
    EXPECT_NE(psOut.find("no running agents"), std::string::npos) << psOut;
    EXPECT_TRUE(test::filesIn(sockets, ".sock").empty());
}

// The job's own SIGTERM handler runs at once, with the sender's siginfo,
// while the agent closes the capture beside it; a writer far behind (a
// source producing as fast as it can) must not delay it.
TEST_F(AgentEndToEnd, SigtermReachesTheJobsHandlerAtOnceWithTheSendersSiginfo) {
    extraEnv["OVERLAPSCOPE_FAKE_RATE"] = "0";  // as fast as it goes: the writer is far behind
    auto r = run({"--buffer-mb", "64"}, {"30", "0", "--sigterm-handler"});
    auto found = agents(1);
    ASSERT_EQ(found.size(), 1u) << r->output();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    const int64_t sentNs = clockNs(CLOCK_MONOTONIC);
    ASSERT_EQ(::kill(static_cast<pid_t>(found[0].pid), SIGTERM), 0);
    EXPECT_EQ(r->waitExitCode(), 3) << r->output();  // the job's choice, not the agent's
    const std::string text = r->output();
    int senderPid = 0, senderCode = -1;
    long long handlerNs = 0;
    const size_t at = text.find("fake_job: SIGTERM from pid");
    ASSERT_NE(at, std::string::npos) << text;
    ASSERT_EQ(std::sscanf(text.c_str() + at, "fake_job: SIGTERM from pid %d code %d, handler at %lld ns", &senderPid,
                          &senderCode, &handlerNs),
              3)
        << text;
    EXPECT_EQ(senderPid, ::getpid()) << "si_pid is not the sender's";
    EXPECT_EQ(senderCode, SI_USER);
    EXPECT_LT(handlerNs - sentNs, 500'000'000) << "the handler ran " << (handlerNs - sentNs) / 1e6 << " ms late";
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    const Capture cap = loadCapture(files[0]);
    EXPECT_GT(cap.kernelCount(), 0u);
    EXPECT_EQ(cap.processes[0].meta.count("dropped_at_exit"), 1u);
}

TEST_F(AgentEndToEnd, NcclPluginRowsThroughTheExportedStruct) {
    auto r = run({}, {"0.3", "0", "--nccl", "5"});
    EXPECT_EQ(r->waitExitCode(), 0) << r->output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    const Capture cap = loadCapture(files[0]);
    const Process& p = cap.processes.at(0);
    const CollectiveTable& c = p.collectives;
    ASSERT_EQ(c.size(), 5u);
    for (size_t i = 0; i < c.size(); ++i) {
        EXPECT_EQ(c.commHash[i], 0xC0FFEEu);
        EXPECT_EQ(c.rank[i], 2);
        EXPECT_EQ(c.nranks[i], 4);
        EXPECT_EQ(c.seqNumber[i], i);
        EXPECT_EQ(cap.strings.at(c.func[i]), "AllReduce");
        EXPECT_EQ(cap.strings.at(c.datatype[i]), "ncclBfloat16");
        EXPECT_EQ(cap.strings.at(c.algo[i]), "RING");
        EXPECT_EQ(cap.strings.at(c.proto[i]), "SIMPLE");
        EXPECT_EQ(c.count[i], 1000u + i);
        EXPECT_EQ(c.bytes[i], (1000u + i) * 2);
        EXPECT_EQ(c.nChannels[i], 2);
        EXPECT_GE(c.enqueue[i], 0);
        // Channel 0 starts at base + i ms; channel 1 stops 100 + 5010 ns later.
        EXPECT_GE(c.gpuStart[i], 0);
        EXPECT_EQ(c.gpuEnd[i] - c.gpuStart[i], 5110);
        if (i > 0) {
            EXPECT_EQ(c.gpuStart[i] - c.gpuStart[i - 1], 1000000);
        }
    }
}

TEST_F(AgentEndToEnd, BadInputIsOneLineAndExitTwo) {
    auto [code, text] = cli({"run", "--agent", dir / "missing.so", "--", OSC_TEST_FAKE_JOB, "0", "0"});
    EXPECT_EQ(code, 2);
    EXPECT_NE(text.find("missing.so: agent library not found"), std::string::npos) << text;
    auto [a, aText] = cli({"attach", "999999"});
    EXPECT_EQ(a, 2);
    EXPECT_NE(aText.find("no agent for pid 999999"), std::string::npos) << aText;
    auto [h, hText] = cli({"run", "--help"});
    EXPECT_EQ(h, 0);
    EXPECT_NE(hText.find("--dormant"), std::string::npos);
}

// The agent is NCCL's profiler plugin unless --no-nccl-plugin; then a
// plugin the job names itself stays.
TEST_F(AgentEndToEnd, NoNcclPluginLeavesNcclsPluginVariableToTheJob) {
    const std::vector<std::string> show = {"--", "/bin/sh", "-c", "echo \"plugin=[$NCCL_PROFILER_PLUGIN]\""};
    auto with = [&](std::vector<std::string> args) {
        std::vector<std::string> a = {"run", "--agent", OSC_TEST_FAKE_AGENT, "-o", out};
        a.insert(a.end(), args.begin(), args.end());
        a.insert(a.end(), show.begin(), show.end());
        return cli(a);
    };
    auto [code, text] = with({});
    EXPECT_EQ(code, 0) << text;
    EXPECT_NE(text.find(std::string("plugin=[") + OSC_TEST_FAKE_AGENT + "]"), std::string::npos) << text;
    auto [code2, text2] = with({"--no-nccl-plugin"});
    EXPECT_EQ(code2, 0) << text2;
    EXPECT_NE(text2.find("plugin=[]"), std::string::npos) << text2;
    extraEnv["NCCL_PROFILER_PLUGIN"] = "/opt/their-plugin.so";
    auto [code3, text3] = with({"--no-nccl-plugin"});
    EXPECT_NE(text3.find("plugin=[/opt/their-plugin.so]"), std::string::npos) << text3;
}

// Durations that overflow the clocks, buffers that wrap to nothing, and
// non-numbers: one line naming the option, exit 2, nothing started.
TEST_F(AgentEndToEnd, OutOfRangeOptionsAreOneLineAndExitTwo) {
    const std::string job = OSC_TEST_FAKE_JOB;
    const std::vector<std::vector<std::string>> cases = {
        {"attach", "--duration", "1e10", "1"},
        {"attach", "--duration=-1", "1"},
        {"attach", "--duration", "nan", "1"},
        {"attach", "--duration", "soon", "1"},
        {"run", "--buffer-mb", "1e30", "--", job, "0", "0"},
        {"run", "--buffer-mb", "0", "--", job, "0", "0"},
        {"run", "--delay", "inf", "--", job, "0", "0"},
        {"run", "--duration", "1e10", "--", job, "0", "0"},
    };
    for (const auto& args : cases) {
        auto [code, text] = cli(args);
        const std::string option = args[1].substr(0, args[1].find('='));
        EXPECT_EQ(code, 2) << args[1] << ": " << text;
        EXPECT_EQ(lineCount(text), 1u) << text;
        EXPECT_NE(text.find(option), std::string::npos) << text;
    }
    EXPECT_TRUE(test::filesIn(out).empty());
}

// A socket in the user's own directory answers with terminal escape
// sequences and a C1 control in its fields: `ps` and `detach` print them
// escaped, never raw; `ps --json` stays valid JSON.
TEST_F(AgentEndToEnd, WhatAnAgentSaysIsEscapedBeforeItIsPrinted) {
    const std::string reply = "{\"ok\":true,\"pid\":" + std::to_string(::getpid()) +
                              ",\"rank\":0,\"host\":\"h\",\"state\":\"dormant\\u001b[2J\","
                              "\"output\":\"/x\\u001b]0;owned\\u0007\",\"captures\":1,\"dropped\":0,"
                              "\"command\":\"evil\\u009b31m\"}\n";
    ASSERT_EQ(::mkdir(sockets.c_str(), 0700), 0);
    test::AnsweringListener agent(control::socketPathFor(sockets, ::getpid()), reply);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"ps"}, std::vector<std::string>{"detach", std::to_string(::getpid())}}) {
        auto [code, text] = cli(args);
        EXPECT_NE(text.find("owned"), std::string::npos) << args[0] << " did not print the agent's fields: " << text;
        EXPECT_EQ(text.find('\x1b'), std::string::npos) << args[0] << " printed a raw escape";
        EXPECT_EQ(text.find('\x07'), std::string::npos) << args[0] << " printed a raw BEL";
        EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << args[0] << " printed a raw C1 control";
        EXPECT_NE(text.find("\\x1b"), std::string::npos) << text;
    }
    auto [jsonCode, json] = cli({"ps", "--json"});
    EXPECT_EQ(jsonCode, 0);
    EXPECT_EQ(json.find('\x1b'), std::string::npos);
    EXPECT_NE(json.find("\\u001b"), std::string::npos) << json;
}

// Issue 16: with --partial each process leaves its capture's partial result
// beside it, and merging the partials gives the report of the captures.
TEST_F(AgentEndToEnd, PartialResultsWrittenAtCloseMergeIntoTheCapturesReport) {
    auto r1 = run({"--partial"}, {"0.6", "0"}, "run1.log");
    auto r2 = run({"--partial", "--step-pattern", "ProfilerStep#[0-9]+", "--microbatch-pattern", "^(F|B) mb(\\d+)$",
                   "--pipeline-stages", "6"},
                  {"0.6", "0"}, "run2.log");
    EXPECT_EQ(r1->waitExitCode(), 0) << r1->output();
    EXPECT_EQ(r2->waitExitCode(), 0) << r2->output();
    const auto captures = test::filesIn(out);
    const auto partials = test::filesIn(out, ".partial.json");
    ASSERT_EQ(captures.size(), 2u);
    ASSERT_EQ(partials.size(), 2u);
    for (size_t i = 0; i < 2; ++i)
        EXPECT_EQ(partials[i], captures[i].substr(0, captures[i].size() - 7) + ".partial.json");
    EXPECT_TRUE(test::filesIn(out, ".tmp").empty());
    // Each partial was made with its process's settings: merging different
    // ones is refused, one line, exit 2.
    auto [mixed, mixedOut] = cli({"merge", out});
    EXPECT_EQ(mixed, 2) << mixedOut;
    EXPECT_NE(mixedOut.find("different analysis settings"), std::string::npos) << mixedOut;
    size_t custom = 0;
    for (const auto& capture : captures) {
        const std::string partial = capture.substr(0, capture.size() - 7) + ".partial.json";
        // The settings the partial's process was given, from its first line.
        std::ifstream in(partial);
        std::string header;
        std::getline(in, header);
        const auto settings = nlohmann::json::parse(header)["settings"];
        const std::string stepPattern = settings["step_pattern"];
        const std::string microbatchPattern = settings["microbatch_pattern"];
        const int stages = settings["pipeline_stages"];
        const bool mine = stepPattern == "ProfilerStep#[0-9]+";
        custom += mine;
        EXPECT_EQ(microbatchPattern == "^(F|B) mb(\\d+)$", mine) << microbatchPattern;
        EXPECT_EQ(stages, mine ? 6 : 0);
        auto [pc, merged] = cli({"merge", "--format", "json", partial});
        ASSERT_EQ(pc, 0) << merged;
        auto [rc, reported] = cli({"report", "--format", "json", "--step-pattern", stepPattern, "--microbatch-pattern",
                                   microbatchPattern, "--pipeline-stages", std::to_string(stages), capture});
        ASSERT_EQ(rc, 0) << reported;
        auto a = nlohmann::json::parse(merged.substr(merged.find('{')));
        auto b = nlohmann::json::parse(reported.substr(reported.find('{')));
        EXPECT_EQ(a["inputs"], nlohmann::json::array({capture}));
        a.erase("inputs");
        b.erase("inputs");
        EXPECT_EQ(a, b) << capture;
        EXPECT_GT(a["devices"][0]["collectives"].size(), 0u);
    }
    EXPECT_EQ(custom, 1u);
}

TEST_F(AgentEndToEnd, DetachWritesThePartialWhileTheJobRunsOn) {
    auto r = run({"--dormant", "--partial"}, {"30", "0"});
    auto found = agents(1);
    ASSERT_EQ(found.size(), 1u) << r->output();
    const int64_t pid = found[0].pid;
    EXPECT_EQ(cli({"attach", std::to_string(pid)}).first, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(cli({"detach", std::to_string(pid)}).first, 0);
    EXPECT_TRUE(test::waitUntil([&] { return test::filesIn(out, ".partial.json").size() == 1; }, 20));
    EXPECT_EQ(state(pid), "stopped");  // the job runs on
    auto [mc, merged] = cli({"merge", out});
    EXPECT_EQ(mc, 0) << merged;
    EXPECT_NE(merged.find("1 device"), std::string::npos) << merged;
    ::kill(static_cast<pid_t>(pid), SIGTERM);
    EXPECT_EQ(r->waitExitCode(), 128 + SIGTERM);
}

TEST_F(AgentEndToEnd, RunRefusesPartialOptionsWithoutPartialAndBadPatterns) {
    auto [a, aOut] =
        cli({"run", "--agent", OSC_TEST_FAKE_AGENT, "--step-pattern", "x", "--", OSC_TEST_FAKE_JOB, "0", "0"});
    EXPECT_EQ(a, 2) << aOut;
    EXPECT_NE(aOut.find("--partial"), std::string::npos) << aOut;
    auto [b, bOut] = cli(
        {"run", "--agent", OSC_TEST_FAKE_AGENT, "--partial", "--comm-kernel", "(", "--", OSC_TEST_FAKE_JOB, "0", "0"});
    EXPECT_EQ(b, 2) << bOut;
    EXPECT_NE(bOut.find("invalid pattern"), std::string::npos) << bOut;
    auto [c, cOut] =
        cli({"run", "--agent", OSC_TEST_FAKE_AGENT, "--pipeline-stages", "4", "--", OSC_TEST_FAKE_JOB, "0", "0"});
    EXPECT_EQ(c, 2) << cOut;
    EXPECT_NE(cOut.find("--partial"), std::string::npos) << cOut;
    auto [d, dOut] = cli({"run", "--agent", OSC_TEST_FAKE_AGENT, "--partial", "--microbatch-pattern", "fwd", "--",
                          OSC_TEST_FAKE_JOB, "0", "0"});
    EXPECT_EQ(d, 2) << dOut;
    EXPECT_NE(dOut.find("two groups"), std::string::npos) << dOut;
    EXPECT_TRUE(test::filesIn(out).empty());
}

#ifdef OSC_TEST_REAL_AGENT
// The real CUPTI library in a process without a GPU or driver: one line on
// stderr, no file, and the job exits with its own code.
TEST_F(AgentEndToEnd, RealAgentWithoutGpuReportsOnceAndStaysOutOfTheWay) {
    auto e = env();
    e["CUDA_INJECTION64_PATH"] = OSC_TEST_REAL_AGENT;
    e["OVERLAPSCOPE_OUTPUT_DIR"] = out;
    std::filesystem::create_directories(out);
    Child job({OSC_TEST_FAKE_JOB, "0.2", "5"}, e, dir / "real.log");
    EXPECT_EQ(job.waitExitCode(), 5);
    const std::string text = job.output();
    size_t lines = 0, pos = 0;
    while ((pos = text.find("overlapscope-agent:", pos)) != std::string::npos) ++lines, ++pos;
    EXPECT_EQ(lines, 1u) << text;
    EXPECT_NE(text.find("capture disabled"), std::string::npos) << text;
    EXPECT_TRUE(test::filesIn(out).empty());
}
#endif

}  // namespace
}  // namespace osc::agent

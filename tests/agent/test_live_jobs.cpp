// Live jobs, round 2 (issue 41), end to end through `overlapscope`, the fake
// agent library and fake_job playing the paced training job: ranks attached
// at one step, collectives numbered from their communicator's creation, the
// report of captures over different steps, the look-back ring (a
// --capture-when capture holds the steps before its trigger, on every rank
// of the job, and `dump`), a stalled rank that `attach` + `hang` name, and
// what the metrics endpoint says of its port.
#include "tests/agent/live_fixture.h"

#include <set>

namespace osc::agent {
namespace {

int64_t realtimeNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::vector<int64_t> stepNumbers(const Capture& cap) {
    std::vector<int64_t> n;
    for (const Process& p : cap.processes)
        for (size_t i = 0; i < p.ranges.size(); ++i) {
            const std::string name(cap.strings.at(p.ranges.name[i]));
            if (name.rfind("ProfilerStep#", 0) == 0) n.push_back(std::stoll(name.substr(13)));
        }
    std::sort(n.begin(), n.end());
    return n;
}

// The first number in `text` after `after`.
int64_t numberAfter(const std::string& text, const std::string& after) {
    const size_t at = text.find(after);
    if (at == std::string::npos) return -1;
    return std::stoll(text.substr(at + after.size()));
}

class LiveJobs : public LiveEndToEnd {
protected:
    // Rank `rank` of a two-rank job (25 ms steps, two 4 MiB all-reduces a step).
    std::unique_ptr<Child> rank(int r, const std::vector<std::string>& runArgs,
                                std::map<std::string, std::string> extra = {}) {
        extra["RANK"] = std::to_string(r);
        extra["WORLD_SIZE"] = "2";
        return run(runArgs, {"60", "0"}, extra, "rank" + std::to_string(r) + ".log");
    }
    // Waits until every agent's step capture has ended.
    bool captured(size_t count) {
        return test::waitUntil(
            [&] {
                const auto found = control::discoverAgents(sockets);
                size_t done = 0;
                for (const auto& a : found)
                    if (const auto& c = a.reply.status.stepCapture; c && c->state == "done") ++done;
                return done >= count;
            },
            30);
    }
};

// `attach --all --duration D` on a job with steps: every rank captures the
// same steps (as many as take about D), and the NCCL rows number each
// all-reduce from the communicator's creation (step n's k-th is 2n + k), not
// from the capture's start, on both ranks alike.
TEST_F(LiveJobs, AttachAllStartsEveryRankAtTheSameStep) {
    auto r0 = rank(0, {"--dormant"});
    auto r1 = rank(1, {"--dormant"});
    ASSERT_EQ(agents(2).size(), 2u);
    auto [code, text] = cli({"attach", "--all", "--duration", "0.2", "--lead", "0.5"});
    ASSERT_EQ(code, 0) << text;
    EXPECT_NE(text.find("the job has steps of about 0.02 s: every rank captures steps"), std::string::npos) << text;
    ASSERT_TRUE(captured(2)) << text;
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 2u);
    std::vector<std::vector<int64_t>> steps;
    std::vector<std::set<uint64_t>> seqs;
    for (const auto& f : files) {
        const Capture cap = loadCapture(f);
        steps.push_back(stepNumbers(cap));
        EXPECT_EQ(steps.back().size(), 10u) << f;  // 0.2 s of 20 ms steps
        std::set<uint64_t> seq;
        const CollectiveTable& c = cap.processes.at(0).collectives;
        for (size_t i = 0; i < c.size(); ++i) {
            seq.insert(c.seqNumber[i]);
            const int64_t step = static_cast<int64_t>(c.seqNumber[i] / 2);
            EXPECT_TRUE(std::binary_search(steps.back().begin(), steps.back().end(), step))
                << f << ": all-reduce #" << c.seqNumber[i] << " is not of a captured step";
        }
        EXPECT_EQ(seq.size(), 2 * steps.back().size()) << f;
        seqs.push_back(seq);
    }
    EXPECT_EQ(steps[0], steps[1]);
    EXPECT_EQ(seqs[0], seqs[1]);
}

// Captures whose windows cover different steps (rank 1 attached three steps
// later): `report` says so and compares the steps both hold. Every rank
// starts its all-reduces at the same moment in the paced job (the files'
// clocks agree to a few microseconds), so nobody waits for anybody: a report
// that matched rank 0's step n with rank 1's step n + 3 (collectives
// numbered from each capture's start) would have rank 0 wait 75 ms for rank
// 1 at every all-reduce.
TEST_F(LiveJobs, TheReportOfCapturesOverDifferentStepsComparesTheStepsBothHold) {
    auto r0 = rank(0, {"--dormant"});
    auto r1 = rank(1, {"--dormant"});
    const auto found = agents(2);
    ASSERT_EQ(found.size(), 2u);
    auto [p, plan] = cli({"attach", "--all", "--steps", "8", "--plan", "--lead", "0.5"});
    ASSERT_EQ(p, 0) << plan;
    const int64_t s = std::stoll(plan);
    const std::map<int64_t, int> rankOf = {{found[0].pid, found[0].reply.status.rank},
                                           {found[1].pid, found[1].reply.status.rank}};
    for (const auto& a : found) {
        const int64_t at = s + 3 * rankOf.at(a.pid);
        auto [c, t] = cli({"attach", std::to_string(a.pid), "--steps", "8", "--at-step", std::to_string(at)});
        ASSERT_EQ(c, 0) << t;
    }
    ASSERT_TRUE(captured(2));
    auto [rep, repOut] = cli({"report", "--format", "json", "-o", dir / "report.json", out});
    ASSERT_EQ(rep, 0) << repOut;
    const auto report = nlohmann::json::parse(readFile(dir / "report.json"));
    bool said = false;
    for (const auto& w : report["warnings"])
        said = said || w.get<std::string>().find("the captures cover different steps") != std::string::npos;
    EXPECT_TRUE(said) << report["warnings"];
    EXPECT_NE(report["warnings"].dump().find("over the 5 steps all of them hold"), std::string::npos);
    ASSERT_EQ(report["devices"].size(), 2u);
    for (const auto& d : report["devices"])
        EXPECT_LT(d["totals"]["delay_caused_ns"].get<int64_t>(), 1'000'000) << "rank " << d["rank"] << " blamed";
    EXPECT_EQ(report["matched_collectives"].size(), 10u);  // 5 steps, 2 all-reduces each
}

// One rank's --capture-when: the steps its look-back ring held up to the
// trigger and the next --capture-steps, and the same steps on the job's other
// ranks: on this node through their sockets, on "another node" (its own
// socket directory) through the shared --trigger-dir.
TEST_F(LiveJobs, OneRanksTriggerCapturesTheSameStepsOnEveryRankOfTheJob) {
    const std::string shared = dir / "triggers";
    ::mkdir(shared.c_str(), 0700);
    const std::vector<std::string> job = {"--job", "llm", "--trigger-dir", shared};
    std::vector<std::string> trigger = {
        "--capture-when", "exposed_comm_ratio>0.2 for 4 steps", "--capture-steps", "3", "--lookback", "3"};
    trigger.insert(trigger.end(), job.begin(), job.end());
    // The followers' rings hold 10 s of 25 ms steps: on a machine busy with
    // builds the trigger took 3 s to reach them, and a step that has left a
    // ring can only be replaced by a later one.
    std::vector<std::string> follower = {"--lookback", "400"};
    follower.insert(follower.end(), job.begin(), job.end());
    auto other = rank(1, follower, {{"OVERLAPSCOPE_SOCKET_DIR", dir / "node2"}});  // "another node"
    auto same = rank(1, follower);
    auto unrelated = run({"--lookback", "80", "--job", "other"}, {"60", "0"}, {{"RANK", "2"}}, "unrelated.log");
    ASSERT_EQ(agents(2).size(), 2u);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the followers record
    auto first = rank(0, trigger);
    ASSERT_TRUE(test::waitUntil([&] { return test::filesIn(out).size() >= 3; }, 20)) << first->output();
    ASSERT_TRUE(test::waitUntil(
        [&] {
            for (const auto& f : test::filesIn(out)) try {
                    if (stepNumbers(loadCapture(f)).size() < 6) return false;
                } catch (const std::exception&) {
                    return false;  // being created
                }
            return true;
        },
        20));
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 3u) << "the unrelated job captured too, or a rank did not";
    std::vector<int64_t> expected;
    for (const auto& f : files) {
        const Capture cap = loadCapture(f);
        const auto n = stepNumbers(cap);
        ASSERT_EQ(n.size(), 6u) << f;
        for (size_t i = 1; i < n.size(); ++i) EXPECT_EQ(n[i], n[i - 1] + 1) << f;
        if (expected.empty()) expected = n;
        EXPECT_EQ(n, expected) << f;
        EXPECT_NE(cap.processes[0].meta.at("step_capture_trigger").find("capture-when"), std::string::npos);
    }
}

// `dump` writes the steps the look-back ring holds, now; an agent without a
// ring says so.
TEST_F(LiveJobs, DumpWritesTheLookbackRingNow) {
    auto ring = run({"--lookback", "4"}, {"60", "0"}, {{"RANK", "0"}}, "ring.log");
    auto none = run({"--dormant"}, {"60", "0"}, {{"RANK", "1"}}, "none.log");
    const auto found = agents(2);
    ASSERT_EQ(found.size(), 2u);
    const int64_t ringPid = found[0].reply.status.rank == 0 ? found[0].pid : found[1].pid;
    const int64_t nonePid = found[0].pid == ringPid ? found[1].pid : found[0].pid;
    ASSERT_TRUE(test::waitUntil([&] { return status(ringPid).lookbackLast >= 0; }, 10));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the ring fills up
    // Steps close every few ms: what had closed before the dump was asked
    // for must be in it, however many close while it is written.
    const auto before = status(ringPid).lastClosedStep;
    auto [code, text] = cli({"dump", std::to_string(ringPid), "-o", dir / "dumps"});
    ASSERT_EQ(code, 0) << text;
    const auto files = test::filesIn(dir / "dumps");
    ASSERT_EQ(files.size(), 1u);
    const auto n = stepNumbers(loadCapture(files[0]));
    ASSERT_EQ(n.size(), 4u);
    for (size_t i = 1; i < n.size(); ++i) EXPECT_EQ(n[i], n[i - 1] + 1);
    EXPECT_GE(n.back(), before) << "an old ring";
    EXPECT_NE(text.find("steps " + std::to_string(n.front()) + " to " + std::to_string(n.back())), std::string::npos)
        << text;
    auto [c2, t2] = cli({"dump", std::to_string(nonePid)});
    EXPECT_EQ(c2, 1) << t2;
    EXPECT_NE(t2.find("keeps no look-back ring"), std::string::npos) << t2;
}

// A rank whose process stops for a while (a loaded machine, a debugger)
// while `attach --steps --wait` waits for the captures: the status request
// it does not answer in time is asked again, and its capture, which ends
// after it resumes, is waited for. (A CI run beside a sanitized build saw the
// first rank of each node called silent after one unanswered request, never
// asked again, and the recipe fail, while every agent finished.)
TEST_F(LiveJobs, AttachWaitAsksAgainARankThatStoppedForAWhile) {
    auto r0 = rank(0, {"--dormant"});
    auto r1 = rank(1, {"--dormant"});
    const auto found = agents(2);
    ASSERT_EQ(found.size(), 2u);
    Child attach({OSC_TEST_CLI, "attach", "--all", "--steps", "4", "--wait", "--lead", "2"},
                 env({{"OVERLAPSCOPE_ANSWER_TIMEOUT_MS", "300"}}), dir / "attach.log");
    // Both wait for their first step (about 2 s away): one stops for longer
    // than the CLI waits for an answer.
    ASSERT_TRUE(test::waitUntil(
        [&] {
            for (const auto& a : found) {
                const auto c = status(a.pid).stepCapture;
                if (!c || c->state != "waiting") return false;
            }
            return true;
        },
        20))
        << attach.output();
    const auto stopped = static_cast<pid_t>(found[0].pid);
    ASSERT_EQ(::kill(stopped, SIGSTOP), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    ASSERT_EQ(::kill(stopped, SIGCONT), 0);
    ASSERT_EQ(attach.waitExitCode(60), 0) << attach.output();
    EXPECT_NE(attach.output().find(std::to_string(stopped) + ".sock: agent did not answer in 0.3 s; asking again"),
              std::string::npos)
        << attach.output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 2u);
    for (const auto& f : files) EXPECT_EQ(stepNumbers(loadCapture(f)).size(), 4u) << f;
}

// `--job` names a job for `ps` and `attach`; `detach` of a step capture that
// had not begun says so and names no older file.
TEST_F(LiveJobs, JobsByNameAndADetachBeforeTheFirstStep) {
    auto a = run({"--dormant", "--job", "alpha"}, {"60", "0"}, {{"RANK", "0"}}, "alpha.log");
    auto b = run({"--dormant", "--job", "beta"}, {"60", "0"}, {{"RANK", "0"}}, "beta.log");
    const auto found = agents(2);
    ASSERT_EQ(found.size(), 2u);
    const int64_t alpha = found[0].reply.status.job == "alpha" ? found[0].pid : found[1].pid;
    const int64_t beta = alpha == found[0].pid ? found[1].pid : found[0].pid;
    auto [ps, psOut] = cli({"ps", "--job", "beta"});
    EXPECT_EQ(ps, 0) << psOut;
    EXPECT_NE(psOut.find(std::to_string(beta)), std::string::npos) << psOut;
    EXPECT_EQ(psOut.find(std::to_string(alpha)), std::string::npos) << psOut;
    // A first capture, so that the agent has an older file it could name.
    auto [first, firstOut] = cli({"attach", "--job", "beta", "--steps", "2", "--wait", "--lead", "0.2"});
    ASSERT_EQ(first, 0) << firstOut;
    const auto older = test::filesIn(out);
    ASSERT_EQ(older.size(), 1u);
    EXPECT_NE(older[0].find(std::to_string(beta)), std::string::npos) << "job alpha was attached";
    auto [wait, waitOut] = cli({"attach", "--job", "beta", "--steps", "2", "--at-step", "9007199254740992"});
    ASSERT_EQ(wait, 0) << waitOut;
    auto [d, dOut] = cli({"detach", "--job", "beta"});
    EXPECT_EQ(d, 0) << dOut;
    EXPECT_NE(dOut.find("stopped before its first step; no file written"), std::string::npos) << dOut;
    EXPECT_EQ(dOut.find(older[0]), std::string::npos) << dOut;
    auto [none, noneOut] = cli({"attach", "--job", "gamma"});
    EXPECT_EQ(none, 2) << noneOut;
    EXPECT_NE(noneOut.find("no running agents found of job gamma"), std::string::npos) << noneOut;
}

// A stalled rank: its host stops before it would enter a step's all-reduce,
// the other rank waits in it. `attach --all` before (one step number for
// both, until detach), `detach --all` after: `hang` names the stalled rank.
TEST_F(LiveJobs, AttachAllAndHangNameTheStalledRank) {
    const std::string stallAt = std::to_string(realtimeNs() + 4'000'000'000);
    const std::map<std::string, std::string> stall = {{"OVERLAPSCOPE_FAKE_STALL_RANK", "1"},
                                                      {"OVERLAPSCOPE_FAKE_STALL_AT_NS", stallAt}};
    auto r0 = rank(0, {"--dormant"}, stall);
    auto r1 = rank(1, {"--dormant"}, stall);
    ASSERT_EQ(agents(2).size(), 2u);
    auto [a, aOut] = cli({"attach", "--all", "--lead", "0.5"});
    ASSERT_EQ(a, 0) << aOut;
    EXPECT_NE(aOut.find("until detach"), std::string::npos) << aOut;
    const int64_t wait = std::stoll(stallAt) + 2'000'000'000 - realtimeNs();
    ASSERT_GT(wait, 0) << "the captures began after the stall";
    std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    auto [d, dOut] = cli({"detach", "--all"});
    ASSERT_EQ(d, 0) << dOut;
    auto [h, hOut] = cli({"hang", "--format", "json", "-o", dir / "hang.json", out});
    EXPECT_EQ(h, 1) << hOut;
    const auto hang = nlohmann::json::parse(readFile(dir / "hang.json"));
    EXPECT_EQ(hang["verdict"], "hang") << hang.dump();
    ASSERT_EQ(hang["stuck_ranks"].size(), 1u) << hang.dump();
    EXPECT_EQ(hang["stuck_ranks"][0]["rank"], 1);
    EXPECT_EQ(hang["first_missing"]["collective"], "AllReduce");
    EXPECT_EQ(hang["first_missing"]["seq"].get<uint64_t>() % 2, 0u) << "not the step's first all-reduce";
}

// The metrics endpoint: the port listened on is printed and exported; a port
// someone else holds, or one past 65535, is one line naming the rank and
// metrics_up 0 in the file; the GPU's idle time between steps is a metric.
TEST_F(LiveJobs, TheMetricsEndpointSaysWhichPortItServesOrWhyNone) {
    const int taken = freePort();
    const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(taken));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(holder, 4), 0);
    auto any = run({"--metrics-port", "0"}, {"60", "0"}, {{"RANK", "0"}}, "any.log");
    auto busy = run({"--metrics-port", std::to_string(taken), "--metrics-file", dir / "busy.prom"}, {"60", "0"},
                    {{"RANK", "1"}}, "busy.log");
    auto high = run({"--metrics-port", "65530", "--metrics-file", dir / "high.prom"}, {"60", "0"},
                    {{"RANK", "2"}, {"LOCAL_RANK", "7"}}, "high.log");
    int port = -1;
    ASSERT_TRUE(test::waitUntil(
        [&] {
            port = static_cast<int>(numberAfter(any->output(), "metrics on http://127.0.0.1:"));
            return port > 0;
        },
        10))
        << any->output();
    std::string served;
    ASSERT_TRUE(test::waitUntil(
        [&] {
            served = scrape(port);
            return sampleValue(served, "overlapscope_steps_total") >= 3;
        },
        20));
    EXPECT_EQ(sampleValue(served, "overlapscope_agent_metrics_port"), port);
    EXPECT_EQ(sampleValue(served, "overlapscope_agent_metrics_up"), 1);
    // The paced step's GPU window is [0.05, 0.85) of its 25 ms: 5 ms idle between steps.
    EXPECT_NEAR(sampleValue(served, "overlapscope_idle_between_steps_seconds"), 0.005, 1e-9) << served;
    ASSERT_TRUE(test::waitUntil([&] { return !readFile(dir / "busy.prom").empty(); }, 10));
    ASSERT_TRUE(test::waitUntil([&] { return !readFile(dir / "high.prom").empty(); }, 10));
    EXPECT_EQ(sampleValue(readFile(dir / "busy.prom"), "overlapscope_agent_metrics_up"), 0);
    EXPECT_EQ(sampleValue(readFile(dir / "high.prom"), "overlapscope_agent_metrics_up"), 0);
    const std::string busyLog = busy->output(), highLog = high->output();
    EXPECT_NE(busyLog.find("rank 1: metrics port 127.0.0.1:" + std::to_string(taken) + ": Address already in use"),
              std::string::npos)
        << busyLog;
    EXPECT_NE(highLog.find("rank 2: --metrics-port 65530 + local rank 7 is past 65535"), std::string::npos) << highLog;
    ::close(holder);
}

}  // namespace
}  // namespace osc::agent

// `diff`: values against hand-worked changes, matching and ordering rules,
// and the command's exit codes on real files (captures and report JSON).
#include "analyzer/report/diff.h"
#include "tests/analyzer/test_kineto_fixture.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <cmath>
#include <cstdlib>

using namespace osc;
using namespace osc::report;

namespace {

OverlapMetrics metrics(TimeNs window, TimeNs compute, TimeNs comm, TimeNs overlap) {
    OverlapMetrics m;
    m.window_ns = window;
    m.compute_ns = compute;
    m.comm_ns = comm;
    m.overlap_ns = overlap;
    m.exposed_comm_ns = comm - overlap;
    m.busy_ns = compute + comm - overlap;
    m.idle_ns = window - m.busy_ns;
    m.computeRatios(compute + comm - overlap);
    return m;
}

DeviceAnalysis device(int rank, uint32_t id, const OverlapMetrics& totals, int steps = 0) {
    DeviceAnalysis d;
    d.rank = rank;
    d.device = id;
    d.totals = totals;
    for (int s = 0; s < steps; ++s) {
        StepAnalysis st;
        st.name = "ProfilerStep#" + std::to_string(s);
        st.metrics = totals;
        d.steps.push_back(st);
    }
    return d;
}

const MetricDelta& metric(const DiffRow& r, const std::string& name) {
    for (const auto& m : r.metrics)
        if (m.name == name) return m;
    throw std::runtime_error("no metric " + name);
}

}  // namespace

TEST(Diff, HandWorkedChanges) {
    Analysis base, cand;
    // base: comm 10 ms, 8 ms hidden (80%), exposed 2 ms.
    // candidate: comm 10 ms, 6 ms hidden (60%), exposed 4 ms.
    base.summary = metrics(30'000'000, 20'000'000, 10'000'000, 8'000'000);
    cand.summary = metrics(31'000'000, 20'000'000, 10'000'000, 6'000'000);
    base.devices.push_back(device(0, 0, base.summary));
    cand.devices.push_back(device(0, 0, cand.summary));
    const DiffResult d = diffAnalyses(base, cand);
    ASSERT_EQ(d.rows.size(), 2u);
    const auto& ratio = metric(d.rows[0], "overlap_ratio");
    EXPECT_DOUBLE_EQ(*ratio.base, 0.8);
    EXPECT_DOUBLE_EQ(*ratio.candidate, 0.6);
    EXPECT_NEAR(*ratio.change, -0.2, 1e-12);
    EXPECT_NEAR(*ratio.regressionPct, 25.0, 1e-9);  // (0.8 - 0.6) / 0.8
    const auto& exposed = metric(d.rows[0], "exposed_comm_ns");
    EXPECT_DOUBLE_EQ(*exposed.change, 2'000'000);
    EXPECT_DOUBLE_EQ(*exposed.relativePct, 100.0);
    EXPECT_DOUBLE_EQ(*exposed.regressionPct, 100.0);
    const auto& window = metric(d.rows[0], "window_ns");
    EXPECT_NEAR(*window.relativePct, 100.0 / 30.0, 1e-9);
    EXPECT_FALSE(window.regressionPct);  // only the two gated metrics count
    EXPECT_DOUBLE_EQ(d.worstRegressionPct, 100.0);
    EXPECT_TRUE(exceedsRegression(d, 99.0));
    EXPECT_FALSE(exceedsRegression(d, 100.0));
}

TEST(Diff, ImprovementIsNoRegression) {
    Analysis base, cand;
    base.summary = metrics(30'000'000, 20'000'000, 10'000'000, 6'000'000);
    cand.summary = metrics(30'000'000, 20'000'000, 10'000'000, 9'000'000);
    const DiffResult d = diffAnalyses(base, cand);
    EXPECT_LT(*metric(d.rows[0], "overlap_ratio").regressionPct, 0);
    EXPECT_DOUBLE_EQ(d.worstRegressionPct, 0);
    EXPECT_FALSE(exceedsRegression(d, 0));
}

TEST(Diff, SubMicrosecondExposedChangeIsNoise) {
    Analysis base, cand;
    base.summary = metrics(1'000'000, 900'000, 100'000, 100'000);  // fully hidden
    cand.summary = metrics(1'000'000, 900'000, 100'000, 99'500);   // 500 ns exposed
    EXPECT_DOUBLE_EQ(*metric(diffAnalyses(base, cand).rows[0], "exposed_comm_ns").regressionPct, 0);
    cand.summary = metrics(1'000'000, 900'000, 100'000, 90'000);  // 10 µs exposed, from 0
    EXPECT_TRUE(std::isinf(*metric(diffAnalyses(base, cand).rows[0], "exposed_comm_ns").regressionPct));
}

TEST(Diff, MatchesDevicesByRankAndOrdersWorstFirst) {
    Analysis base, cand;
    const auto good = metrics(10'000'000, 8'000'000, 4'000'000, 3'000'000);
    const auto bad = metrics(10'000'000, 8'000'000, 4'000'000, 1'000'000);
    const auto worse = metrics(10'000'000, 8'000'000, 4'000'000, 0);
    for (int r = 0; r < 3; ++r) base.devices.push_back(device(r, 0, good, 2));
    base.devices.push_back(device(7, 0, good));  // rank 7 only in the base
    // Candidate lists ranks in another order; rank 1 regresses most, rank 2 less.
    cand.devices.push_back(device(2, 0, bad, 2));
    cand.devices.push_back(device(0, 0, good, 3));
    cand.devices.push_back(device(1, 0, worse, 2));
    cand.devices.push_back(device(5, 1, good));  // only in the candidate
    const DiffResult d = diffAnalyses(base, cand);
    std::vector<std::string> devices, steps;
    for (const auto& r : d.rows) {
        if (r.scope == DiffScope::Device) devices.push_back(r.label);
        if (r.scope == DiffScope::Step) steps.push_back(r.label);
    }
    EXPECT_EQ(devices, (std::vector<std::string>{"rank 1 gpu 0", "rank 2 gpu 0", "rank 0 gpu 0"}));
    ASSERT_EQ(steps.size(), 6u);
    EXPECT_EQ(steps.front().rfind("rank 1 gpu 0 step", 0), 0u);
    EXPECT_EQ(steps.back().rfind("rank 0 gpu 0 step", 0), 0u);
    // exposed 1 ms -> 4 ms on rank 1: +300%.
    EXPECT_DOUBLE_EQ(d.worstRegressionPct, 300.0);
    ASSERT_EQ(d.notes.size(), 3u);
    const std::string notes = d.notes[0] + "|" + d.notes[1] + "|" + d.notes[2];
    EXPECT_NE(notes.find("rank 7 gpu 0 is only in the base"), std::string::npos);
    EXPECT_NE(notes.find("rank 5 gpu 1 is only in the candidate"), std::string::npos);
    EXPECT_NE(notes.find("2 steps in the base, 3 in the candidate"), std::string::npos);

    const auto j = nlohmann::json::parse(formatDiffJson(d, 50.0));
    EXPECT_EQ(j.at("format"), "overlapscope-diff");
    EXPECT_EQ(j.at("regressed"), true);
    EXPECT_EQ(j.at("rows").at(1).at("label"), "rank 1 gpu 0");
    EXPECT_DOUBLE_EQ(j.at("rows").at(1).at("metrics").at("exposed_comm_ns").at("candidate").get<double>(), 4'000'000);
    EXPECT_NE(formatDiffText(d, 50.0).find("REGRESSION"), std::string::npos);
    EXPECT_NE(formatDiffMarkdown(d, 50.0).find("| rank 1 gpu 0"), std::string::npos);
}

// The command line, end to end.
class DiffCommand : public ::testing::Test {
protected:
    std::string path(const std::string& n) const { return dir_ / n; }
    int run(const std::string& args) const {
        const std::string cmd = std::string(OSC_CLI) + " " + args + " > " + path("out.txt") + " 2> " + path("err.txt");
        const int rc = std::system(cmd.c_str());
        return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    }
    // One step of compute [0,100 µs) and NCCL [50, 50+commUs µs): exposed = comm - 50 µs.
    void writeTrace(const std::string& name, int64_t commUs) const {
        using osc::testing::KEvent;
        std::vector<KEvent> ev(2);
        ev[0] = {"kernel", "gemm", 1'000'000, 100'000, 0, 7, 0, 7, 1};
        ev[1] = {"kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1'050'000, commUs * 1000, 0, 13, 0, 13, 2};
        osc::testing::writeText(path(name), osc::testing::traceJson(ev));
    }
    const osc::testsupport::TempDir dir_;
};

TEST_F(DiffCommand, ExitCodesAndReportInputs) {
    writeTrace("base.json", 100);  // exposed 50 µs, ratio 0.5
    writeTrace("same.json", 100);
    writeTrace("worse.json", 150);  // exposed 100 µs (+100%), ratio 1/3 (-33%)
    EXPECT_EQ(run("diff " + path("base.json") + " " + path("same.json") + " --fail-on-regression 1"), 0);
    EXPECT_EQ(run("diff " + path("base.json") + " " + path("worse.json") + " --fail-on-regression 5%"), 1);
    EXPECT_EQ(run("diff " + path("base.json") + " " + path("worse.json") + " --fail-on-regression 150"), 0);
    EXPECT_EQ(run("diff " + path("base.json") + " " + path("worse.json")), 0);  // no limit: report only
    EXPECT_EQ(run("diff " + path("base.json") + " " + path("missing.json")), 2);
    EXPECT_EQ(run("diff " + path("base.json") + " " + path("same.json") + " --fail-on-regression x"), 2);

    // A saved report as the base.
    ASSERT_EQ(run("report --format json " + path("base.json") + " -o " + path("base.report.json")), 0);
    EXPECT_EQ(
        run("diff " + path("base.report.json") + " " + path("worse.json") + " --format json --fail-on-regression 5"),
        1);
    std::ifstream in(path("out.txt"));
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("regressed"), true);
    EXPECT_NEAR(j.at("rows").at(0).at("metrics").at("exposed_comm_ns").at("regression_pct").get<double>(), 100.0, 1e-9);
    EXPECT_NEAR(j.at("rows").at(0).at("metrics").at("overlap_ratio").at("regression_pct").get<double>(),
                (0.5 - 1.0 / 3.0) / 0.5 * 100.0, 1e-9);
}

TEST_F(DiffCommand, ExportRefusesToOverwrite) {
    writeTrace("t.json", 100);
    EXPECT_EQ(run("export " + path("t.json") + " -o " + path("t.trace.json")), 0);
    EXPECT_EQ(run("export " + path("t.json") + " -o " + path("t.trace.json")), 2);
    std::ifstream err(path("err.txt"));
    std::string line;
    std::getline(err, line);
    EXPECT_NE(line.find("already exists"), std::string::npos) << line;
    EXPECT_EQ(run("export " + path("t.json") + " -o " + path("t.trace.json") + " --force"), 0);
    EXPECT_EQ(run("export --help"), 0);
    EXPECT_EQ(run("diff --help"), 0);
}

TEST(Diff, InterferenceAndWaitingAreComparedNotGated) {
    Analysis base, cand;
    base.summary = cand.summary = metrics(30'000'000, 20'000'000, 10'000'000, 8'000'000);
    base.devices.push_back(device(0, 0, base.summary));
    cand.devices.push_back(device(0, 0, cand.summary));
    base.devices[0].interference.interference_ns = 1'000'000;
    cand.devices[0].interference.interference_ns = 3'000'000;
    base.devices[0].wait = WaitTransferMetrics{4'000'000, 1'500'000, 500'000};
    cand.devices[0].wait = WaitTransferMetrics{2'000'000, 500'000, 1'500'000};
    base.devices[0].delay_caused_ns = 0;
    cand.devices[0].delay_caused_ns = 700'000;
    const auto d = diffAnalyses(base, cand);
    const auto& r = d.rows.at(1);
    ASSERT_EQ(r.scope, DiffScope::Device);
    EXPECT_DOUBLE_EQ(*metric(r, "interference_ns").change, 2'000'000);
    EXPECT_DOUBLE_EQ(*metric(r, "interference_ns").relativePct, 200.0);
    EXPECT_DOUBLE_EQ(*metric(r, "exposed_wait_ns").change, -1'000'000);
    EXPECT_DOUBLE_EQ(*metric(r, "exposed_transfer_ns").change, 1'000'000);
    EXPECT_DOUBLE_EQ(*metric(r, "delay_caused_ns").change, 700'000);
    // One side without waiting figures (a single-device report): no change.
    EXPECT_FALSE(metric(r, "last_arrivals").change.has_value());
    EXPECT_EQ(d.worstRegressionPct, 0.0);  // the gated metrics did not move
}

// The whole pipeline on synthetic workloads whose answers follow from the
// model by hand (analyzer/synth/README.md): synth -> analyze, and
// synth -> file -> load -> analyze -> report JSON.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/workload_synth.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace osc;
using namespace osc::synth;

namespace {

constexpr TimeNs kBucketComm = 20'000 + 1'342'177;  // 32 MiB at 25 GB/s + alpha
constexpr TimeNs kLayerComm = 20'000 + 335'544;     // 8 MiB at 25 GB/s + alpha
constexpr TimeNs kCompute = 18'000'000;             // 12 x (0.5 + 1.0) ms per step
constexpr TimeNs kGap = 100'000;

struct Expect {
    TimeNs comm, overlap;  // per step
};

void expectTotals(const Analysis& a, int steps, Expect e, TimeNs stepWindow) {
    ASSERT_EQ(a.devices.size(), 1u);
    const auto& t = a.devices[0].totals;
    EXPECT_EQ(t.compute_ns, steps * kCompute);
    EXPECT_EQ(t.comm_ns, steps * e.comm);
    EXPECT_EQ(t.overlap_ns, steps * e.overlap);
    EXPECT_EQ(t.exposed_comm_ns, steps * (e.comm - e.overlap));
    EXPECT_EQ(t.window_ns, steps * stepWindow + (steps - 1) * kGap);
    EXPECT_EQ(t.idle_ns, (steps - 1) * kGap);
    ASSERT_TRUE(t.overlap_ratio);
    EXPECT_NEAR(*t.overlap_ratio, static_cast<double>(e.overlap) / static_cast<double>(e.comm), 1e-12);
    ASSERT_EQ(a.devices[0].steps.size(), static_cast<size_t>(steps));
    for (int s = 0; s < steps; ++s) {
        const auto& st = a.devices[0].steps[static_cast<size_t>(s)];
        EXPECT_EQ(st.name, "step " + std::to_string(s));
        EXPECT_EQ(st.metrics.window_ns, stepWindow);
        EXPECT_EQ(st.metrics.comm_ns, e.comm);
        EXPECT_EQ(st.metrics.exposed_comm_ns, e.comm - e.overlap);
    }
}

}  // namespace

TEST(SynthAnalysis, BucketedHidesAllButTheLastBucket) {
    WorkloadSpec s;
    s.steps = 3;
    const auto a = analyze(synthesizeWorkload(s));
    expectTotals(a, 3, {3 * kBucketComm, 2 * kBucketComm}, kCompute + kBucketComm);
    // The last bucket (#2) is the bottleneck of every step, with all the exposed time.
    const auto& d = a.devices[0];
    for (const auto& st : d.steps) {
        ASSERT_GE(st.bottleneck.collective, 0);
        const auto& c = d.collectives[static_cast<size_t>(st.bottleneck.collective)];
        EXPECT_EQ(c.exposed_ns, kBucketComm);
        EXPECT_EQ(c.bytes, 32ull << 20);
        ASSERT_TRUE(st.bottleneck.share);
        EXPECT_NEAR(*st.bottleneck.share, 1.0, 1e-12);
        EXPECT_FALSE(st.bottleneck.communicationBound);
    }
}

TEST(SynthAnalysis, SequentialHidesNothing) {
    WorkloadSpec s;
    s.mode = OverlapMode::Sequential;
    s.steps = 2;
    const auto a = analyze(synthesizeWorkload(s));
    expectTotals(a, 2, {3 * kBucketComm, 0}, kCompute + 3 * kBucketComm);
}

TEST(SynthAnalysis, PerParamExposesOnlyTheLastLayer) {
    WorkloadSpec s;
    s.mode = OverlapMode::PerParam;
    s.steps = 2;
    const auto a = analyze(synthesizeWorkload(s));
    expectTotals(a, 2, {12 * kLayerComm, 11 * kLayerComm}, kCompute + kLayerComm);
}

TEST(SynthAnalysis, CommOnComputeStreamHidesNothingAndIsFound) {
    WorkloadSpec s;
    s.commOnComputeStream = true;
    s.steps = 2;
    const auto a = analyze(synthesizeWorkload(s));
    expectTotals(a, 2, {3 * kBucketComm, 0}, kCompute + 3 * kBucketComm);
    bool found = false;
    for (const auto& f : a.devices[0].findings)
        if (f.kind == FindingKind::CommOnComputeStream) found = true;
    for (const auto& st : a.devices[0].steps)
        for (const auto& f : st.bottleneck.findings)
            if (f.kind == FindingKind::CommOnComputeStream) found = true;
    EXPECT_TRUE(found);
}

TEST(SynthAnalysis, SlowLinkIsCommunicationBound) {
    WorkloadSpec s;
    s.steps = 1;
    s.bandwidthGBps = 2;  // 32 MiB takes 16.8 ms per bucket: more than the compute
    const auto a = analyze(synthesizeWorkload(s));
    ASSERT_EQ(a.devices.size(), 1u);
    EXPECT_GT(a.devices[0].totals.comm_ns, a.devices[0].totals.compute_ns);
    ASSERT_EQ(a.devices[0].steps.size(), 1u);
    EXPECT_TRUE(a.devices[0].steps[0].bottleneck.communicationBound);
}

TEST(SynthPipeline, FileRoundTripGivesTheSameAnswersInTheReport) {
    const testsupport::TempDir dir;
    const auto file = dir / "ddp.sqlite";
    WorkloadSpec s;
    s.steps = 3;
    ASSERT_EQ(writeWorkload(s, file, false), std::vector<std::string>{file});
    EXPECT_THROW(writeWorkload(s, file, false), std::exception);  // never replaced silently
    const auto a = analyze(loadCapture(file));
    expectTotals(a, 3, {3 * kBucketComm, 2 * kBucketComm}, kCompute + kBucketComm);

    report::ReportOptions o;
    o.inputs = {file};
    const auto j = nlohmann::json::parse(report::formatJsonReport(a, o));
    const auto& t = j["devices"][0]["totals"];
    EXPECT_EQ(t["exposed_comm_ns"].get<TimeNs>(), 3 * kBucketComm);
    EXPECT_EQ(t["comm_ns"].get<TimeNs>(), 9 * kBucketComm);
    EXPECT_NEAR(t["overlap_ratio"].get<double>(), 2.0 / 3.0, 1e-12);
    EXPECT_EQ(j["devices"][0]["rank"], 0);
    EXPECT_EQ(j["devices"][0]["host"], "synth-host");
    EXPECT_EQ(j["devices"][0]["pid"], 4000);
    EXPECT_EQ(j["devices"][0]["steps"].size(), 3u);
    EXPECT_EQ(j["devices"][0]["collectives"].size(), 9u);
    EXPECT_EQ(j["devices"][0]["collectives"][0]["bytes"], 32ull << 20);
}

TEST(SynthPipeline, MultiRankDirectory) {
    const testsupport::TempDir tmp;
    const auto dir = tmp / "ranks";
    WorkloadSpec s;
    s.ranks = 4;
    s.steps = 2;
    s.jitter = 0.05;
    const auto files = writeWorkload(s, dir, false);
    ASSERT_EQ(files.size(), 4u);
    EXPECT_EQ(std::filesystem::path(files[3]).filename(), "synth-host-4003-rank3.sqlite");
    const auto a = analyze(loadCapture(dir));
    ASSERT_EQ(a.devices.size(), 4u);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(a.devices[static_cast<size_t>(r)].rank, r);
    // 3 buckets x 2 steps, each seen on all 4 ranks.
    EXPECT_EQ(a.matched.size(), 6u);
    for (const auto& m : a.matched) EXPECT_EQ(m.instances.size(), 4u);
    EXPECT_GT(a.total_skew_ns, 0);
    EXPECT_TRUE(a.spread.has_value());
    // Summary sums devices.
    TimeNs comm = 0;
    for (const auto& d : a.devices) comm += d.totals.comm_ns;
    EXPECT_EQ(a.summary.comm_ns, comm);
}

TEST(SynthPipeline, ManyRanksWrittenOneAtATimeMatchTheInMemoryJob) {
    // Past 64 ranks the files are written one after another from buffered
    // rows; what they hold must be the job the model makes in memory.
    const testsupport::TempDir tmp;
    const auto dir = tmp / "many";
    WorkloadSpec s;
    s.ranks = 80;
    s.steps = 1;
    s.layers = 3;
    s.jitter = 0.05;
    ASSERT_EQ(writeWorkload(s, dir, false).size(), 80u);
    const auto fromFiles = analyze(loadCapture(dir));
    const auto inMemory = analyze(synthesizeWorkload(s));
    ASSERT_EQ(fromFiles.devices.size(), inMemory.devices.size());
    for (size_t d = 0; d < inMemory.devices.size(); ++d) {
        const auto& f = fromFiles.devices[d];
        const auto& m = inMemory.devices[d];
        EXPECT_EQ(f.rank, m.rank);
        EXPECT_EQ(f.totals.window_ns, m.totals.window_ns);
        EXPECT_EQ(f.totals.compute_ns, m.totals.compute_ns);
        EXPECT_EQ(f.totals.exposed_comm_ns, m.totals.exposed_comm_ns);
        EXPECT_EQ(f.steps.size(), m.steps.size());
        ASSERT_EQ(f.collectives.size(), m.collectives.size());
        for (size_t c = 0; c < m.collectives.size(); ++c) {
            EXPECT_EQ(f.collectives[c].start_ns, m.collectives[c].start_ns);
            EXPECT_EQ(f.collectives[c].bytes, m.collectives[c].bytes);
        }
    }
    EXPECT_EQ(fromFiles.matched.size(), inMemory.matched.size());
    EXPECT_EQ(fromFiles.total_skew_ns, inMemory.total_skew_ns);
}

TEST(SynthPipeline, RanksUpTo4096) {
    WorkloadSpec s;
    s.ranks = 4096;
    EXPECT_NO_THROW(s.validate());
    s.ranks = 4097;
    EXPECT_THROW(s.validate(), std::exception);
    s.ranks = 0;
    EXPECT_THROW(s.validate(), std::exception);
}

TEST(SynthPipeline, InterferenceHasItsAnalyticAnswer) {
    // Per-param, 12 layers: each backward kernel after the first starts with
    // the previous layer's all-reduce (100 us + 20 MB / 25 GB/s = 900 us),
    // which covers at least half of its 1.25 ms; the first backward kernel
    // of each step runs alone (5 isolated, baseline 1 ms). Per step:
    // 11 x 0.25 ms = 2.75 ms of interference; slowdown 0.25.
    WorkloadSpec s;
    s.mode = OverlapMode::PerParam;
    s.layers = 12;
    s.steps = 5;
    s.interference = 1.25;
    s.alphaNs = 100'000;
    s.gradBytesPerLayer = 20'000'000;
    s.bandwidthGBps = 25;
    const auto a = analyze(synthesizeWorkload(s));
    const auto& d = a.devices.at(0);
    EXPECT_EQ(d.interference.interference_ns, 5 * 11 * 250'000);
    EXPECT_EQ(d.interference.interfered_compute_ns, 5 * 11 * 1'250'000);
    EXPECT_EQ(d.interference.overlapped_compute_ns, 5 * 11 * 1'250'000);
    ASSERT_TRUE(d.interference.compute_slowdown.has_value());
    EXPECT_DOUBLE_EQ(*d.interference.compute_slowdown, 0.25);
    EXPECT_EQ(d.interference.net_overlap_gain_ns, d.totals.overlap_ns - 5 * 11 * 250'000);
    for (const auto& st : d.steps) EXPECT_EQ(st.interference.interference_ns, 11 * 250'000);
    ASSERT_EQ(d.signatures.size(), 1u);
    EXPECT_EQ(d.signatures[0].isolated, 5);
    EXPECT_EQ(d.signatures[0].overlapped, 55);
    EXPECT_EQ(d.signatures[0].baseline_ns, 1'000'000);
    EXPECT_EQ(d.signatures[0].median_overlapped_ns, 1'250'000);
    EXPECT_EQ(d.wait.has_value(), false);  // one device
}

TEST(SynthPipeline, ArrivalSkewAndClockOffsetsHaveTheirAnalyticAnswers) {
    // Rank 3 starts every step 300 us late; comm (10 us + 1 MB / 25 GB/s =
    // 50 us) is shorter than a backward layer, so every one of the 6 x 3
    // all-reduces waits exactly 300 us for rank 3 on ranks 0-2.
    WorkloadSpec s;
    s.ranks = 4;
    s.mode = OverlapMode::PerParam;
    s.layers = 6;
    s.steps = 3;
    s.alphaNs = 10'000;
    s.gradBytesPerLayer = 1'000'000;
    s.arrivalSkewNs = {0, 0, 0, 300'000};
    s.clockOffsetNs = {0, 50'000, -70'000, 0};
    AnalysisSettings aligned;
    aligned.alignCollectives = true;
    const auto a = analyze(synthesizeWorkload(s), aligned);
    ASSERT_EQ(a.devices.size(), 4u);
    const TimeNs shifts[] = {0, -50'000, 70'000, 0};
    for (size_t r = 0; r < 4; ++r) {
        const auto& d = a.devices[r];
        EXPECT_EQ(d.clock_shift_ns, shifts[r]) << r;
        EXPECT_EQ(d.last_arrivals, r == 3 ? 18 : 0) << r;
        EXPECT_EQ(d.delay_caused_ns, r == 3 ? 18 * 300'000 : 0) << r;
        ASSERT_TRUE(d.wait.has_value());
        EXPECT_EQ(d.wait->comm_wait_ns, r == 3 ? 0 : 18 * 300'000) << r;
    }
    // Without alignment the offsets are read as waiting.
    const auto plain = analyze(synthesizeWorkload(s));
    EXPECT_NE(plain.devices[1].wait->comm_wait_ns, 18 * 300'000);
}

// The whole pipeline on synthetic workloads whose answers follow from the
// model by hand (analyzer/synth/README.md): synth -> analyze, and
// synth -> file -> load -> analyze -> report JSON.
#include "analyzer/load/load_capture.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/workload_synth.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include <unistd.h>

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

std::string tempDir(const std::string& name) {
    const auto p = std::filesystem::temp_directory_path() /
                   ("osc_test_synth_pipeline_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(p);
    return p.string();
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
    const auto dir = tempDir("one");
    std::filesystem::create_directories(dir);
    const auto file = dir + "/ddp.sqlite";
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
    std::filesystem::remove_all(dir);
}

TEST(SynthPipeline, MultiRankDirectory) {
    const auto dir = tempDir("ranks");
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
    std::filesystem::remove_all(dir);
}

TEST(SynthPipeline, ManyRanksWrittenOneAtATimeMatchTheInMemoryJob) {
    // Past 64 ranks the files are written one after another from buffered
    // rows; what they hold must be the job the model makes in memory.
    const auto dir = tempDir("many");
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
    std::filesystem::remove_all(dir);
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

// docs/design.md 4d by hand: nccl-tests' factors and byte conventions, the
// link table, the design's worked example, synthetic jobs whose answers are
// worked out from the model (a host stall on one rank, slow compute on
// another), and what the reports, `check`, `diff` and the JSON reader make
// of the fields. The brute force over random jobs is in
// test_collective_health_bruteforce.cpp.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/bus_bandwidth.h"
#include "analyzer/report/check.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "analyzer/synth/workload_synth.h"
#include "test_metrics_support.h"

#include <gtest/gtest.h>

#include <sstream>

namespace osc {
namespace {

CollectiveInstance collective(const std::string& c, std::optional<uint64_t> bytes, int n) {
    CollectiveInstance op;
    op.collective = c;
    op.bytes = bytes;
    op.commSize = n;
    op.kernelIndex = 0;
    return op;
}

TEST(BusBandwidth, FactorsAreNcclTests) {
    EXPECT_DOUBLE_EQ(*busFactor("AllReduce", 8), 2.0 * 7 / 8);
    EXPECT_DOUBLE_EQ(*busFactor("AllGather", 8), 7.0 / 8);
    EXPECT_DOUBLE_EQ(*busFactor("ReduceScatter", 4), 3.0 / 4);
    EXPECT_DOUBLE_EQ(*busFactor("AllToAll", 2), 0.5);
    for (const char* one : {"Broadcast", "Reduce", "Send", "Recv", "SendRecv"}) EXPECT_EQ(busFactor(one, -1), 1.0);
    EXPECT_FALSE(busFactor("AllReduce", -1));  // n unknown
    EXPECT_FALSE(busFactor("Custom", 8));
    EXPECT_DOUBLE_EQ(*busFactor("AllReduce", 1), 0.0);
}

TEST(BusBandwidth, BytesFollowNcclConventions) {
    // NCCL's count is an all-gather's send and a reduce-scatter's receive: n times it is the larger buffer.
    EXPECT_EQ(busBytes(collective("AllReduce", 1000, 4)), 1000u);
    EXPECT_EQ(busBytes(collective("AllGather", 1000, 4)), 4000u);
    EXPECT_EQ(busBytes(collective("ReduceScatter", 1000, 4)), 4000u);
    EXPECT_EQ(busBytes(collective("Broadcast", 1000, -1)), 1000u);
    EXPECT_FALSE(busBytes(collective("AllGather", 1000, -1)));
    EXPECT_FALSE(busBytes(collective("AllReduce", std::nullopt, 4)));
    // Sends and receives: whichever way moved more.
    CollectiveInstance sr = collective("SendRecv", 0, 4);
    sr.p2p = {{true, 1, 300, {}}, {true, 2, 300, {}}, {false, 1, 500, {}}};
    EXPECT_EQ(busBytes(sr), 600u);
    EXPECT_EQ(busFactor(sr), 1.0);
    sr.allToAll = true;  // an all-to-all of grouped sends and receives is an AllToAll
    EXPECT_DOUBLE_EQ(*busFactor(sr), 3.0 / 4);
    CollectiveInstance copy = collective("", 4096, -1);
    copy.kernelIndex = static_cast<size_t>(-1);
    EXPECT_FALSE(busBytes(copy));
}

TEST(BusBandwidth, LinkTableKnowsTheCommonBoards) {
    const auto peak = [](const char* name) { return linkOfGpu(name) ? linkOfGpu(name)->gbps : 0.0; };
    EXPECT_EQ(peak("NVIDIA H100 80GB HBM3"), 450);
    EXPECT_EQ(peak("NVIDIA H100 PCIe"), 64);
    EXPECT_EQ(peak("NVIDIA H100 NVL"), 300);
    EXPECT_EQ(peak("NVIDIA H200"), 450);
    EXPECT_EQ(peak("NVIDIA GH200 480GB"), 450);
    EXPECT_EQ(peak("NVIDIA A100-SXM4-80GB"), 300);
    EXPECT_EQ(peak("NVIDIA A100-PCIE-40GB"), 32);
    EXPECT_EQ(peak("Tesla V100-SXM2-32GB"), 150);
    EXPECT_EQ(peak("NVIDIA B200"), 900);
    EXPECT_EQ(peak("NVIDIA L40S"), 32);
    EXPECT_EQ(peak("Mystery GPU"), 0);
    EXPECT_EQ(linkOfGpu("NVIDIA H100 80GB HBM3")->link, "NVLink 4 (H100 SXM)");
    EXPECT_EQ(sizeClassOf(0), 0u);
    EXPECT_EQ(sizeClassOf(1), 1u);
    EXPECT_EQ(sizeClassOf(25u << 20), 16u << 20);
    EXPECT_EQ(sizeClassOf(32u << 20), 32u << 20);
}

// docs/design.md 4d's example: an AllReduce of 256 MiB on 8 ranks with 2 ms
// of transfer: algbw 134.2 GB/s, busbw 134.2 x 2 x 7/8 = 234.9 GB/s.
TEST(BusBandwidth, DesignExample) {
    testing::TraceBuilder b;
    for (int r = 0; r < 8; ++r) {
        b.device(r, 0).gpu.name = "NVIDIA H100 80GB HBM3";
        // Rank 7 arrives last at 1 ms; the data moves from then for 2 ms.
        const TimeNs start = r == 7 ? 1'000'000 : 0;
        b.kernel(r, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", start, 3'000'000, 13);
        b.pluginRow(r, 0, 0xAB, 0, "AllReduce", 268'435'456, -1, start, 3'000'000);
        b.process(r).collectives.nranks.back() = 8;
    }
    const Analysis a = analyze(b.finalized());
    for (const auto& d : a.devices) {
        const CollectiveInstance& c = d.collectives.at(0);
        EXPECT_DOUBLE_EQ(*c.algbw_gbps, 268'435'456.0 / 2'000'000.0);
        EXPECT_NEAR(*c.busbw_gbps, 234.881024, 1e-9);
        EXPECT_EQ(c.busbw_basis, BusBwBasis::Transfer);
        EXPECT_NEAR(*c.busbw_fraction, 234.881024 / 450, 1e-12);
        EXPECT_EQ(d.busbw->link, "NVLink 4 (H100 SXM)");
        // Over a kernel's whole duration the waiting would count: rank 0's 3 ms read 89.5 GB/s.
        EXPECT_NEAR(*c.bandwidth_gbps, 268'435'456.0 / c.duration_ns, 1e-9);
    }
    // 52% of the peak, all exposed: the link was not the limit.
    EXPECT_EQ(a.devices[0].busbw->schedule_limit_exposed_ns, 3'000'000);
    EXPECT_EQ(a.devices[0].busbw->bandwidth_limit_exposed_ns, 0);

    AnalysisSettings fast;
    fast.peakBusBwGbps = 250;  // a link this job nearly fills
    const Analysis f = analyze(b.capture, fast);
    EXPECT_EQ(f.devices[0].busbw->link, "--peak-busbw-gbps");
    EXPECT_EQ(f.devices[0].busbw->bandwidth_limit_exposed_ns, 3'000'000);
    bool limit = false;
    for (const auto& x : f.devices[0].findings)
        if (x.kind == FindingKind::BandwidthLimit) {
            limit = true;
            EXPECT_EQ(x.exposed_ns, 3'000'000);
            EXPECT_NE(x.message.find("median 94% of the link's peak bus bandwidth (--peak-busbw-gbps, 250 GB/s): the "
                                     "link is the limit"),
                      std::string::npos)
                << x.message;
        }
    EXPECT_TRUE(limit);

    // A peak below half the measured 234.9 GB/s is no peak of this link:
    // no fraction (a report would otherwise say 235% and pass any
    // --min-busbw-fraction); just under twice, still a fraction (1.96).
    AnalysisSettings wrong;
    wrong.peakBusBwGbps = 117;
    const Analysis w = analyze(b.capture, wrong);
    EXPECT_FALSE(w.devices[0].collectives[0].busbw_fraction);
    EXPECT_FALSE(w.devices[0].busbw->median_busbw_fraction);
    EXPECT_NEAR(*w.devices[0].busbw->median_busbw_gbps, 234.881024, 1e-9);
    report::Thresholds t;
    t.minBusBwFraction = 0.5;
    const auto o = report::runChecks(w, t).at(0);
    EXPECT_TRUE(o.skipped);
    EXPECT_EQ(o.message,
              "rank 0 gpu 0: bus bandwidth against the link's peak not measured (median bus bandwidth 235 GB/s, more "
              "than twice the peak 117 GB/s of --peak-busbw-gbps: the peak is wrong, or the transfers too short to "
              "time)");
    wrong.peakBusBwGbps = 120;
    EXPECT_NEAR(*analyze(b.capture, wrong).devices[0].collectives[0].busbw_fraction, 234.881024 / 120, 1e-12);
}

// Ranks on two hosts: the GPU's link does not bound their collectives.
TEST(BusBandwidth, CollectivesAcrossHostsHaveNoFractionOfTheGpuLink) {
    testing::TraceBuilder b;
    for (int r = 0; r < 2; ++r) {
        b.process(r).host = "node" + std::to_string(r);
        b.device(r, 0).gpu.name = "NVIDIA A100-SXM4-80GB";
        b.kernel(r, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 1'000'000, 13);
        b.pluginRow(r, 0, 0xAB, 0, "AllReduce", 1 << 20, -1, 0, 1'000'000);
    }
    const Analysis a = analyze(b.finalized());
    EXPECT_TRUE(a.devices[0].collectives[0].busbw_gbps);
    EXPECT_FALSE(a.devices[0].collectives[0].busbw_fraction);
    EXPECT_TRUE(a.devices[0].findings.empty() || a.devices[0].findings[0].kind != FindingKind::ScheduleLimit);
    AnalysisSettings network;
    network.peakBusBwGbps = 25;
    EXPECT_TRUE(analyze(b.capture, network).devices[0].collectives[0].busbw_fraction);
}

// Three ranks, two of them on one GPU (same UUID, as ranks time-slicing one
// GPU or sharing it under MPS report it): their traffic crosses no link, so
// neither gets a fraction of the model's peak or a link finding; each says
// whom it shares with, ranked with its exposed communication (all of the
// 1 ms all-reduce; rank 2 arrives last). Rank 2 keeps its own GPU's link.
TEST(BusBandwidth, RanksSharingOneGpuHaveNoLinkButSaySo) {
    testing::TraceBuilder b;
    for (int r = 0; r < 3; ++r) {
        b.device(r, 0).gpu.name = "NVIDIA H100 80GB HBM3";
        b.device(r, 0).gpu.uuid = r < 2 ? "GPU-aaaa" : "GPU-bbbb";
        b.kernel(r, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 1'000'000, 13);
        b.pluginRow(r, 0, 0xAB, 0, "AllReduce", 1 << 20, -1, 0, 1'000'000);
        b.process(r).collectives.nranks.back() = 3;
    }
    const auto sharedFinding = [](const DeviceAnalysis& d) -> const Finding* {
        for (const auto& f : d.findings)
            if (f.kind == FindingKind::SharedGpu) return &f;
        return nullptr;
    };
    const Analysis a = analyze(b.finalized());
    for (int r = 0; r < 2; ++r) {
        const DeviceAnalysis& d = a.devices[static_cast<size_t>(r)];
        EXPECT_TRUE(d.collectives[0].busbw_gbps);
        EXPECT_FALSE(d.collectives[0].busbw_fraction);
        EXPECT_FALSE(d.busbw->peak_busbw_gbps);
        for (const auto& f : d.findings)
            EXPECT_TRUE(f.kind != FindingKind::ScheduleLimit && f.kind != FindingKind::BandwidthLimit) << f.message;
        const Finding* f = sharedFinding(d);
        ASSERT_TRUE(f);
        EXPECT_EQ(f->exposed_ns, 1'000'000);
        const std::string other = r == 0 ? "rank 1 gpu 0" : "rank 0 gpu 0";
        EXPECT_EQ(f->message.rfind("Shares its GPU with " + other + " (the same GPU UUID)", 0), 0u) << f->message;
    }
    EXPECT_FALSE(sharedFinding(a.devices[2]));
    EXPECT_TRUE(a.devices[2].collectives[0].busbw_fraction);
    EXPECT_EQ(a.devices[2].busbw->link, "NVLink 4 (H100 SXM)");

    AnalysisSettings given;
    given.peakBusBwGbps = 25;  // the user's own figure still applies
    const Analysis g = analyze(b.capture, given);
    EXPECT_TRUE(g.devices[0].collectives[0].busbw_fraction);
    ASSERT_TRUE(sharedFinding(g.devices[0]));
    EXPECT_NE(sharedFinding(g.devices[0])->message.find("but --peak-busbw-gbps's."), std::string::npos);

    // A process that only computes on rank 0's GPU (no communication) shares nothing with it.
    testing::TraceBuilder h;
    for (int r = 0; r < 2; ++r) {
        h.device(r, 0).gpu.name = "NVIDIA H100 80GB HBM3";
        h.device(r, 0).gpu.uuid = "GPU-aaaa";
    }
    h.kernel(0, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 1'000'000, 13);
    h.pluginRow(0, 0, 0xAB, 0, "AllReduce", 1 << 20, -1, 0, 1'000'000);
    h.kernel(1, 0, "ampere_sgemm_128x64_nn", 0, 1'000'000, 7);
    const Analysis helper = analyze(h.finalized());
    EXPECT_FALSE(sharedFinding(helper.devices[0]));
    EXPECT_TRUE(helper.devices[0].busbw->peak_busbw_gbps);

    // Unknown UUIDs (PyTorch traces) say nothing of sharing.
    for (int r = 0; r < 3; ++r) b.device(r, 0).gpu.uuid.clear();
    const Analysis u = analyze(b.capture);
    for (const auto& d : u.devices) EXPECT_FALSE(sharedFinding(d));
}

synth::WorkloadSpec dataParallel(int ranks, int steps) {
    synth::WorkloadSpec s;
    s.ranks = ranks;
    s.steps = steps;
    return s;  // 12 layers of 0.5 ms / 1 ms, 8 MiB each: 3 buckets of 32 MiB
}
constexpr TimeNs kComm = 20'000 + 1'342'177;  // 32 MiB at 25 GB/s + alpha

// Rank 2's host loads data for 4.1 ms before step 1: it arrives late at the
// step's three all-reduces, by 4.1 ms at the first and, the others having
// waited for it there, by 4 ms - the all-reduce at the next two.
TEST(Straggler, HostStallHasAKnownAnswer) {
    synth::WorkloadSpec s = dataParallel(4, 3);
    s.hostStallRank = 2;
    s.hostStallNs = 4'100'000;
    s.hostStallStep = 1;
    const Analysis a = analyze(synth::synthesizeWorkload(s));
    for (const auto& d : a.devices) EXPECT_EQ(d.straggler.has_value(), d.rank == 2) << d.rank;
    const StragglerMetrics& st = *a.devices[2].straggler;
    EXPECT_EQ(st.late_arrivals, 3);
    EXPECT_EQ(st.late_ns, 4'100'000 + 2 * (4'000'000 - kComm));
    EXPECT_EQ(st.host_idle_ns, 3 * 4'100'000);
    const LateArrival& w = st.worst;
    EXPECT_EQ(w.collective, "AllReduce");
    EXPECT_EQ(w.number, 3u);  // the plugin's sequence number: step 1's first
    EXPECT_EQ(w.step, "step 1");
    EXPECT_EQ(w.medianLabel, "rank 1 gpu 1");
    EXPECT_EQ(w.late_ns, 4'100'000);
    EXPECT_EQ(w.delay_ns, 4'100'000);
    EXPECT_EQ(w.host_idle_ns, 4'100'000);
    EXPECT_EQ(w.compute_ns, 0);
    EXPECT_EQ(w.late_start_ns, 0);
    EXPECT_EQ(w.other_ns, 0);
    ASSERT_EQ(w.host.size(), 1u);
    EXPECT_EQ(w.host[0].name, "DataLoader.__next__");
    EXPECT_EQ(w.host[0].ns, 4'100'000);
    EXPECT_TRUE(w.kernels.empty());
    bool found = false;
    for (const auto& f : a.devices[2].findings)
        if (f.kind == FindingKind::Straggler) {
            found = true;
            EXPECT_EQ(f.message,
                      "arrived 4.100 ms late at AllReduce #3 of step 1 (against the median rank, rank 1 gpu 1; the "
                      "others waited 4.100 ms for it alone): 4.100 ms of it host-bound (GPU idle) in "
                      "`DataLoader.__next__`.");
            EXPECT_EQ(f.exposed_ns, 4'100'000);
        }
    EXPECT_TRUE(found);
    // The job-level sentence names the cause.
    const std::string text = report::formatTextReport(a, {});
    EXPECT_NE(text.find("at worst 4.10 ms after the median rank, at AllReduce #3 of step 1: 4.10 ms of it host-bound "
                        "(GPU idle) in `DataLoader.__next__`"),
              std::string::npos)
        << text;
}

// Rank 1's kernels run 1.5 times longer: 5 ms late at each step's first
// all-reduce, all of it in longer GEMMs, named.
TEST(Straggler, SlowComputeHasAKnownAnswer) {
    synth::WorkloadSpec s = dataParallel(3, 2);
    s.slowComputeRank = 1;
    s.slowComputeFactor = 1.5;
    const Analysis a = analyze(synth::synthesizeWorkload(s));
    ASSERT_TRUE(a.devices[1].straggler);
    const LateArrival& w = a.devices[1].straggler->worst;
    EXPECT_EQ(w.number, 0u);
    EXPECT_EQ(w.medianDevice, 2);
    EXPECT_EQ(w.late_ns, 5'000'000);
    EXPECT_EQ(w.compute_ns, 5'000'000);
    EXPECT_EQ(w.host_idle_ns, 0);
    EXPECT_EQ(w.late_start_ns, 0);
    EXPECT_EQ(w.other_ns, 0);
    ASSERT_EQ(w.kernels.size(), 2u);
    EXPECT_EQ(w.kernels[0].name, "ampere_sgemm_128x64_nn");  // 12 forward GEMMs, 0.25 ms longer each
    EXPECT_EQ(w.kernels[0].ns, 3'000'000);
    EXPECT_EQ(w.kernels[1].name, "ampere_sgemm_128x64_nt");  // 4 backward GEMMs, 0.5 ms longer each
    EXPECT_EQ(w.kernels[1].ns, 2'000'000);
}

TEST(BusBandwidth, SynthJobsHaveKnownAnswers) {
    const Analysis a = analyze(synth::synthesizeWorkload(dataParallel(4, 2)));
    const double alg = 33'554'432.0 / kComm, bus = alg * 2 * 3 / 4;
    for (const auto& d : a.devices) {
        EXPECT_EQ(d.gpu, "NVIDIA H100 80GB HBM3 (synthetic)");
        ASSERT_EQ(d.busbw->classes.size(), 1u);
        EXPECT_EQ(d.busbw->classes[0].collective, "AllReduce");
        EXPECT_EQ(d.busbw->classes[0].size_class, 32u << 20);
        EXPECT_EQ(d.busbw->classes[0].count, 6);
        EXPECT_DOUBLE_EQ(*d.busbw->median_algbw_gbps, alg);
        EXPECT_DOUBLE_EQ(*d.busbw->median_busbw_gbps, bus);
        EXPECT_DOUBLE_EQ(*d.busbw->median_busbw_fraction, bus / 450);
    }
}

Analysis hostStallJob() {
    synth::WorkloadSpec s = dataParallel(4, 3);
    s.hostStallRank = 2;
    s.hostStallNs = 4'100'000;
    s.hostStallStep = 1;
    return analyze(synth::synthesizeWorkload(s));
}

TEST(CollectiveHealthCheck, ThresholdsPassAndFail) {
    const Analysis a = hostStallJob();
    report::Thresholds t;
    t.minBusBwFraction = 0.1;  // the synthetic link runs at 8% of an H100's
    t.maxStragglerDelayMs = 4.0;
    const auto outcomes = report::runChecks(a, t);
    int busFailed = 0, lateFailed = 0;
    for (const auto& o : outcomes) {
        if (o.name == "min-busbw-fraction" && !o.passed) ++busFailed;
        if (o.name == "max-straggler-delay-ms" && !o.passed) {
            ++lateFailed;
            EXPECT_EQ(o.scope, "rank 2 gpu 2");
            EXPECT_NE(o.message.find("4.100 ms after the median rank at AllReduce #3 of step 1"), std::string::npos)
                << o.message;
        }
    }
    EXPECT_EQ(busFailed, 4);
    EXPECT_EQ(lateFailed, 1);
    t.minBusBwFraction = 0.08;
    t.maxStragglerDelayMs = 4.2;
    for (const auto& o : report::runChecks(a, t)) EXPECT_TRUE(o.passed) << o.message;
    t.minBusBwFraction = 1.5;
    EXPECT_THROW(report::runChecks(a, t), std::invalid_argument);
}

TEST(CollectiveHealthReport, JsonReadsBack) {
    const Analysis a = hostStallJob();
    std::ostringstream out;
    report::writeJsonReport(out, a, {});
    const Analysis back = report::parseReportJson(out.str(), "test").analysis;
    ASSERT_EQ(back.devices.size(), a.devices.size());
    EXPECT_EQ(back.settings.stragglerLateNs, a.settings.stragglerLateNs);
    for (size_t d = 0; d < a.devices.size(); ++d) {
        const auto& x = a.devices[d];
        const auto& y = back.devices[d];
        EXPECT_EQ(y.gpu, x.gpu);
        ASSERT_TRUE(y.busbw);
        EXPECT_EQ(y.busbw->link, x.busbw->link);
        EXPECT_EQ(y.busbw->median_busbw_gbps, x.busbw->median_busbw_gbps);
        EXPECT_EQ(y.busbw->schedule_limit_exposed_ns, x.busbw->schedule_limit_exposed_ns);
        ASSERT_EQ(y.busbw->classes.size(), x.busbw->classes.size());
        EXPECT_EQ(y.busbw->classes[0].size_class, x.busbw->classes[0].size_class);
        for (size_t i = 0; i < x.collectives.size(); ++i) {
            EXPECT_EQ(y.collectives[i].busbw_gbps, x.collectives[i].busbw_gbps);
            EXPECT_EQ(y.collectives[i].busbw_basis, x.collectives[i].busbw_basis);
        }
        ASSERT_EQ(y.straggler.has_value(), x.straggler.has_value());
        if (x.straggler) {
            EXPECT_EQ(y.straggler->late_ns, x.straggler->late_ns);
            EXPECT_EQ(y.straggler->worst.host[0].name, "DataLoader.__next__");
            EXPECT_EQ(y.straggler->worst.host_idle_ns, x.straggler->worst.host_idle_ns);
            EXPECT_EQ(y.straggler->worst.commHash, x.straggler->worst.commHash);
        }
        // The whole document again from what was read: nothing lost.
        std::ostringstream again;
        report::writeJsonReport(again, back, {});
        EXPECT_EQ(again.str().find("\"busbw\": null"), std::string::npos);
    }
}

TEST(CollectiveHealthReport, DiffShowsBandwidthAndLateness) {
    const Analysis base = analyze(synth::synthesizeWorkload(dataParallel(4, 3)));
    const Analysis late = hostStallJob();
    const report::DiffResult diff = report::diffAnalyses(base, late);
    bool lateness = false, busbw = false;
    for (const auto& row : diff.rows)
        for (const auto& m : row.metrics) {
            if (m.name == "straggler_late_ns" && row.label == "rank 2 gpu 2") {
                lateness = true;
                EXPECT_FALSE(m.base);
                EXPECT_EQ(m.candidate, 4'100'000.0);
            }
            if (m.name == "median_busbw_gbps" && m.base) busbw = true;
        }
    EXPECT_TRUE(lateness);
    EXPECT_TRUE(busbw);
    EXPECT_NE(report::formatDiffJson(diff, std::nullopt).find("\"median_busbw_fraction\""), std::string::npos);
}

TEST(CollectiveHealthReport, TextAndMarkdownSayIt) {
    const Analysis a = hostStallJob();
    report::ReportOptions o;
    o.collectives = true;
    const std::string text = report::formatTextReport(a, o);
    EXPECT_NE(text.find("bus bandwidth, 8% of the link's peak (NVLink 4 (H100 SXM), 450 GB/s)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("Bus bandwidth on rank 0 gpu 0 by collective and size"), std::string::npos);
    EXPECT_NE(text.find("schedule exposed it"), std::string::npos);
    const std::string md = report::formatMarkdownReport(a, o);
    EXPECT_NE(md.find("host-bound (GPU idle) in `DataLoader.__next__`"), std::string::npos) << md;
}

}  // namespace
}  // namespace osc

// The pipeline, all-to-all and point-to-point results in the reports: the
// JSON fields (and reading them back), the text and Markdown sections,
// `check --max-bubble-share / --max-alltoall-imbalance` and `diff`. Inputs
// are the synth models, whose answers analyzer/synth/README.md works out.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/report/check.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/report_markdown.h"
#include "analyzer/report/report_text.h"
#include "analyzer/synth/pattern_synth.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace osc;
using namespace osc::synth;
using nlohmann::json;

namespace {

Analysis pipeline(int slowStage = -1) {
    PipelineSpec s;
    s.steps = 2;
    s.slowStage = slowStage;
    s.slowFactor = 2.0;
    return analyze(synthesizePipeline(s));
}

Analysis alltoall(double imbalance) {
    AllToAllSpec s;
    s.steps = 2;
    s.imbalance = imbalance;
    s.hotRank = 2;
    return analyze(synthesizeAllToAll(s));
}

const report::CheckOutcome* find(const std::vector<report::CheckOutcome>& v, const std::string& scope,
                                 const std::string& name) {
    for (const auto& o : v)
        if (o.scope == scope && o.name == name) return &o;
    return nullptr;
}

const report::MetricDelta* metric(const report::DiffRow& r, const std::string& name) {
    for (const auto& m : r.metrics)
        if (m.name == name) return &m;
    return nullptr;
}

}  // namespace

TEST(PatternReports, JsonCarriesThePipelineAndReadsBack) {
    const Analysis a = pipeline(3);
    const std::string text = report::formatJsonReport(a, {});
    const json j = json::parse(text);
    const json& step = j["devices"][0]["steps"][0];
    // 4 stages, 8 micro-batches; stage 3 twice as slow: window 8 x 3 + 3 x 1.5 = 28.5 ms.
    EXPECT_EQ(step["pipeline_window_ns"], 28'500'000);
    EXPECT_EQ(step["bubble_ns"], 16'500'000);
    EXPECT_NEAR(step["theoretical_bubble_share"].get<double>(), 3.0 / 11.0, 1e-12);
    EXPECT_EQ(step["pipeline_stage"], 0);
    EXPECT_EQ(step["pipeline_stages"], 4);
    EXPECT_EQ(step["microbatches"], 8);
    EXPECT_EQ(step["slowest_stage"], false);
    EXPECT_EQ(j["devices"][3]["steps"][0]["slowest_stage"], true);
    EXPECT_EQ(step["bottleneck"]["findings"][0]["kind"], "pipeline-bubble");
    EXPECT_EQ(j["devices"][0]["totals"]["bubble_ns"], 2 * 16'500'000);
    EXPECT_TRUE(j["devices"][0]["totals"]["alltoall_ns"].is_null());
    EXPECT_EQ(j["summary"]["bubble_ns"], 2 * (3 * 16'500'000 + 4'500'000));
    EXPECT_TRUE(j["summary"]["alltoall_imbalance"].is_null());
    ASSERT_EQ(j["pipeline"].size(), 2u);
    EXPECT_EQ(j["pipeline"][0]["slowest"]["rank"], 3);
    EXPECT_EQ(j["pipeline"][0]["stage_devices"].size(), 4u);
    EXPECT_EQ(j["p2p_transfers"].size(), a.p2p.size());
    EXPECT_EQ(j["settings"]["pipeline_stages"], 0);

    const Analysis back = report::parseReportJson(text, "report.json").analysis;
    ASSERT_EQ(back.devices.size(), a.devices.size());
    for (size_t d = 0; d < a.devices.size(); ++d) {
        ASSERT_TRUE(back.devices[d].pipeline);
        EXPECT_EQ(back.devices[d].pipeline->bubble_ns, a.devices[d].pipeline->bubble_ns);
        EXPECT_EQ(back.devices[d].pipeline->compute_ns, a.devices[d].pipeline->compute_ns);
        EXPECT_EQ(back.devices[d].steps[1].pipeline->stage, a.devices[d].steps[1].pipeline->stage);
        EXPECT_EQ(back.devices[d].steps[1].pipeline->slowest, a.devices[d].steps[1].pipeline->slowest);
    }
    ASSERT_EQ(back.pipeline.size(), 2u);
    EXPECT_EQ(back.pipeline[1].devices, a.pipeline[1].devices);
    EXPECT_EQ(back.pipeline[1].slowest, 3);
    ASSERT_EQ(back.p2p.size(), a.p2p.size());
    EXPECT_EQ(back.p2p.back().sender, a.p2p.back().sender);
    EXPECT_EQ(back.p2p.back().receiver, a.p2p.back().receiver);
}

TEST(PatternReports, JsonCarriesTheAllToAllAndReadsBack) {
    const Analysis a = alltoall(3.0);
    const std::string text = report::formatJsonReport(a, {});
    const json j = json::parse(text);
    ASSERT_EQ(j["alltoall"].size(), 2u);
    const json& s = j["alltoall"][0];
    EXPECT_EQ(s["exchanges"], 2);
    EXPECT_NEAR(s["bytes_imbalance"].get<double>(), 4.0 / 3.0, 1e-12);
    EXPECT_EQ(s["overloaded"]["rank"], 2);
    EXPECT_EQ(s["pairs"].size(), 12u);
    EXPECT_EQ(j["devices"][2]["totals"]["alltoall_ops"], 4);
    EXPECT_TRUE(j["devices"][2]["totals"]["bubble_ns"].is_null());
    EXPECT_NEAR(j["summary"]["alltoall_imbalance"].get<double>(), 4.0 / 3.0, 1e-12);
    size_t exchanges = 0;
    for (const auto& m : j["matched_collectives"]) exchanges += m["point_to_point"].get<bool>();
    EXPECT_EQ(exchanges, 4u);

    const Analysis back = report::parseReportJson(text, "report.json").analysis;
    ASSERT_EQ(back.alltoall.size(), 2u);
    EXPECT_EQ(back.alltoall[1].overloaded, 2);
    EXPECT_EQ(back.alltoall[1].bytes_imbalance, a.alltoall[1].bytes_imbalance);
    EXPECT_EQ(back.alltoall[1].pairs.size(), 12u);
    ASSERT_TRUE(back.devices[0].alltoall);
    EXPECT_EQ(back.devices[0].alltoall->exposed_alltoall_ns, a.devices[0].alltoall->exposed_alltoall_ns);
    EXPECT_EQ(back.devices[0].alltoall->bytes_sent, a.devices[0].alltoall->bytes_sent);
    EXPECT_TRUE(back.matched.front().pointToPoint);
}

TEST(PatternReports, OldReportsWithoutTheFieldsStillRead) {
    // What a report of the previous release holds: no pattern fields at all.
    const std::string old = R"({"format": "overlapscope-report", "version": 1,
      "devices": [{"rank": 0, "device": 0, "totals": {"window_ns": 10, "compute_ns": 5, "comm_ns": 5,
        "overlap_ns": 0, "exposed_comm_ns": 5, "busy_ns": 10, "idle_ns": 0, "overlap_ratio": 0,
        "achieved_speedup": 1, "ideal_speedup": 2}, "steps": [], "collectives": []}],
      "summary": {"window_ns": 10, "compute_ns": 5, "comm_ns": 5, "overlap_ns": 0, "exposed_comm_ns": 5,
        "busy_ns": 10, "idle_ns": 0, "overlap_ratio": 0, "achieved_speedup": 1, "ideal_speedup": 2}})";
    const Analysis a = report::parseReportJson(old, "old.json").analysis;
    EXPECT_FALSE(a.devices[0].pipeline);
    EXPECT_FALSE(a.devices[0].alltoall);
    EXPECT_TRUE(a.pipeline.empty() && a.alltoall.empty() && a.p2p.empty());
    // A malformed list is one clear error, not a crash.
    std::string bad = old;
    bad.insert(bad.rfind('}'), R"(, "p2p_transfers": [{"sender": 3}])");
    EXPECT_THROW(report::parseReportJson(bad, "bad.json"), std::exception);
}

TEST(PatternReports, TextAndMarkdownTellThePatterns) {
    const Analysis p = pipeline(3);
    report::ReportOptions o;
    const std::string text = report::formatTextReport(p, o);
    EXPECT_NE(text.find("\nPipeline:\n"), std::string::npos) << text;
    EXPECT_NE(text.find("slowest stage: rank 3 gpu 3 (most compute in 2 of 2 steps)"), std::string::npos) << text;
    EXPECT_NE(text.find("fill and drain ((S-1)/(M+S-1)) explain 27%"), std::string::npos) << text;
    EXPECT_NE(text.find("\nPoint-to-point:\n"), std::string::npos);
    EXPECT_NE(text.find("has no compute for 58% of the pipeline window"), std::string::npos) << text;
    EXPECT_EQ(text.find("All-to-all:"), std::string::npos);
    const std::string md = report::formatMarkdownReport(p, o);
    EXPECT_NE(md.find("**Pipeline**"), std::string::npos);
    EXPECT_NE(md.find("Pipeline bubble per stage"), std::string::npos);

    o.steps = true;
    const Analysis a = alltoall(3.0);
    const std::string t2 = report::formatTextReport(a, o);
    EXPECT_NE(t2.find("worst imbalance: 1.33x of the mean bytes in step 0 (rank 2 gpu 2 overloaded)"),
              std::string::npos)
        << t2;
    EXPECT_NE(t2.find("bytes imbalance"), std::string::npos);  // the per-step table
    EXPECT_EQ(t2.find("\nPipeline:\n"), std::string::npos);
}

TEST(PatternReports, CheckBubbleShareAndAllToAllImbalance) {
    report::Thresholds t;
    t.maxBubbleShare = 0.3;  // balanced: 3/11 = 0.27 on every stage
    auto out = report::runChecks(pipeline(), t);
    for (const auto& o : out) EXPECT_TRUE(o.passed) << o.message;
    ASSERT_NE(find(out, "summary", "max-bubble-share"), nullptr);
    t.maxBubbleShare = 0.25;
    out = report::runChecks(pipeline(), t);
    EXPECT_FALSE(find(out, "rank 0 gpu 0", "max-bubble-share")->passed);
    EXPECT_FALSE(find(out, "summary", "max-bubble-share")->passed);
    // The slow stage itself idles least: 4.5 of 28.5 ms.
    t.maxBubbleShare = 0.2;
    out = report::runChecks(pipeline(3), t);
    EXPECT_TRUE(find(out, "rank 3 gpu 3", "max-bubble-share")->passed);
    EXPECT_FALSE(find(out, "rank 2 gpu 2", "max-bubble-share")->passed);
    // No pipeline: passes, saying why.
    out = report::runChecks(alltoall(1.0), t);
    EXPECT_TRUE(find(out, "rank 0 gpu 0", "max-bubble-share")->passed);

    report::Thresholds u;
    u.maxAllToAllImbalance = 1.2;
    out = report::runChecks(alltoall(3.0), u);
    const auto* o = find(out, "summary", "max-alltoall-imbalance");
    ASSERT_NE(o, nullptr);
    EXPECT_FALSE(o->passed);
    EXPECT_NE(o->message.find("1.33 (bytes) in step 'step 0', rank 2 gpu 2 overloaded, above the maximum 1.20"),
              std::string::npos)
        << o->message;
    u.maxAllToAllImbalance = 1.5;
    EXPECT_TRUE(find(report::runChecks(alltoall(3.0), u), "summary", "max-alltoall-imbalance")->passed);
    EXPECT_TRUE(find(report::runChecks(pipeline(), u), "summary", "max-alltoall-imbalance")->passed);

    report::Thresholds bad;
    bad.maxAllToAllImbalance = 0.9;
    EXPECT_THROW(report::runChecks(Analysis{}, bad), std::invalid_argument);
    bad = {};
    bad.maxBubbleShare = 1.5;
    EXPECT_THROW(report::runChecks(Analysis{}, bad), std::invalid_argument);
}

TEST(PatternReports, DiffComparesTheNewFields) {
    const auto d = report::diffAnalyses(pipeline(), pipeline(3));
    const auto& summary = d.rows.front();
    const auto* share = metric(summary, "bubble_share");
    ASSERT_NE(share, nullptr);
    ASSERT_TRUE(share->base && share->candidate);
    EXPECT_NEAR(*share->base, 3.0 / 11.0, 1e-12);
    // Candidate: three stages at 16.5 and one at 4.5 of 28.5 ms.
    EXPECT_NEAR(*share->candidate, (3 * 16.5 + 4.5) / (4 * 28.5), 1e-12);
    bool deviceRow = false;
    for (const auto& r : d.rows)
        if (r.scope == report::DiffScope::Device && r.label == "rank 0 gpu 0") {
            deviceRow = true;
            EXPECT_EQ(*metric(r, "bubble_ns")->base, 2 * 4'500'000);
            EXPECT_EQ(*metric(r, "bubble_ns")->candidate, 2 * 16'500'000);
        }
    EXPECT_TRUE(deviceRow);
    const auto a2a = report::diffAnalyses(alltoall(1.0), alltoall(3.0));
    const auto* imbalance = metric(a2a.rows.front(), "alltoall_imbalance");
    ASSERT_NE(imbalance, nullptr);
    EXPECT_DOUBLE_EQ(*imbalance->base, 1.0);
    EXPECT_NEAR(*imbalance->candidate, 4.0 / 3.0, 1e-12);
    // Shown, not gated: the gated metrics decide alone.
    EXPECT_NE(report::formatDiffText(a2a, std::nullopt).find("alltoall_imbalance"), std::string::npos);
    EXPECT_NE(report::formatDiffJson(a2a, std::nullopt).find("\"bubble_share\""), std::string::npos);
}

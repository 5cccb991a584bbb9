// The report JSON against docs/design.md section 5, field by field, and the
// reader that brings a saved report back (check --baseline, diff).
#include "analyzer/capture/capture_error.h"
#include "analyzer/report/json_member_spans.h"
#include "analyzer/report/report_json.h"
#include "analyzer/report/text_blocks.h"
#include "tests/analyzer/test_report_fixture.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

using namespace osc;
using namespace osc::report;
using nlohmann::json;

namespace {

json reportOf(const Analysis& a) {
    ReportOptions o;
    o.inputs = {"r0.sqlite", "dir/"};
    o.toolVersion = "9.9.9";
    return json::parse(formatJsonReport(a, o));
}

const std::set<std::string> kMetricKeys = {"window_ns",        "compute_ns",   "comm_ns", "overlap_ns",
                                           "exposed_comm_ns",  "busy_ns",      "idle_ns", "overlap_ratio",
                                           "achieved_speedup", "ideal_speedup"};
// docs/design.md section 5: totals and steps also carry the 4b and 4c fields.
const std::set<std::string> kInterferenceWaitKeys = {
    "overlapped_compute_ns", "interfered_compute_ns", "interference_ns", "interference_coverage",
    "compute_slowdown",      "net_overlap_gain_ns",   "comm_wait_ns",    "exposed_wait_ns",
    "exposed_transfer_ns",   "kernels_without_peer"};

// docs/metrics.md 7e/7f: the pipeline and all-to-all fields (null when absent).
const std::set<std::string> kPatternKeys = {"pipeline_window_ns",
                                            "bubble_ns",
                                            "bubble_share",
                                            "theoretical_bubble_share",
                                            "fill_ns",
                                            "drain_ns",
                                            "stall_ns",
                                            "alltoall_ops",
                                            "alltoall_ns",
                                            "exposed_alltoall_ns",
                                            "alltoall_transfer_ns",
                                            "alltoall_bytes_sent",
                                            "alltoall_bytes_received"};

std::set<std::string> unionOf(std::set<std::string> a, const std::set<std::string>& b, std::set<std::string> c = {}) {
    a.insert(b.begin(), b.end());
    a.insert(c.begin(), c.end());
    return a;
}

std::set<std::string> keysOf(const json& obj) {
    std::set<std::string> k;
    for (auto it = obj.begin(); it != obj.end(); ++it) k.insert(it.key());
    return k;
}

void expectMetrics(const json& j, const OverlapMetrics& m) {
    for (const auto& k : kMetricKeys) EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j["window_ns"].get<int64_t>(), m.window_ns);
    EXPECT_EQ(j["compute_ns"].get<int64_t>(), m.compute_ns);
    EXPECT_EQ(j["comm_ns"].get<int64_t>(), m.comm_ns);
    EXPECT_EQ(j["overlap_ns"].get<int64_t>(), m.overlap_ns);
    EXPECT_EQ(j["exposed_comm_ns"].get<int64_t>(), m.exposed_comm_ns);
    EXPECT_EQ(j["busy_ns"].get<int64_t>(), m.busy_ns);
    EXPECT_EQ(j["idle_ns"].get<int64_t>(), m.idle_ns);
    auto ratio = [&](const char* key, const std::optional<double>& v) {
        if (v)
            EXPECT_DOUBLE_EQ(j[key].get<double>(), *v) << key;
        else
            EXPECT_TRUE(j[key].is_null()) << key;
    };
    ratio("overlap_ratio", m.overlap_ratio);
    ratio("achieved_speedup", m.achieved_speedup);
    ratio("ideal_speedup", m.ideal_speedup);
}

// Each case: the good document with one value replaced is refused with
// exactly that message.
using Refusal = std::tuple<json::json_pointer, json, std::string>;
void expectRefused(const json& good, const std::vector<Refusal>& cases) {
    for (const auto& [where, value, message] : cases) {
        json bad = good;
        ASSERT_TRUE(bad.contains(where)) << where.to_string();
        bad[where] = value;
        try {
            parseReportJson(bad.dump(), "base.json");
            ADD_FAILURE() << where.to_string() << " = " << value.dump() << " was read";
        } catch (const CaptureError& e) {
            EXPECT_EQ(std::string(e.what()), "base.json: not a valid overlapscope report: " + message);
        }
    }
}

}  // namespace

TEST(ReportJson, TopLevelShape) {
    const auto j = reportOf(fixture::oneDeviceAnalysis());
    EXPECT_EQ(j["format"], "overlapscope-report");
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["generator"], "overlapscope 9.9.9");
    EXPECT_EQ(j["inputs"], json({"r0.sqlite", "dir/"}));
    ASSERT_TRUE(j["settings"].is_object());
    EXPECT_EQ(j["settings"]["comm_copies"], false);
    EXPECT_EQ(j["settings"]["step_pattern"], AnalysisSettings{}.stepPattern);
    EXPECT_TRUE(j["settings"]["comm_kernel_patterns"].is_array());
    ASSERT_TRUE(j["devices"].is_array());
    ASSERT_EQ(j["devices"].size(), 1u);
    ASSERT_TRUE(j["summary"].is_object());
    EXPECT_TRUE(j["spread"].is_null());
    EXPECT_EQ(j["matched_collectives"], json::array());
}

TEST(ReportJson, DeviceTotalsStepsCollectives) {
    const auto a = fixture::oneDeviceAnalysis();
    const auto j = reportOf(a);
    const auto& d = j["devices"][0];
    EXPECT_EQ(d["rank"], 0);
    EXPECT_EQ(d["host"], "node");
    EXPECT_EQ(d["pid"], 100);
    EXPECT_EQ(d["device"], 0);
    EXPECT_EQ(keysOf(d["totals"]),
              unionOf(unionOf(kMetricKeys, kInterferenceWaitKeys, kPatternKeys), {"last_arrivals", "delay_caused_ns"}));
    for (const auto& k : kPatternKeys) EXPECT_TRUE(d["totals"][k].is_null()) << k;  // no pipeline, no all-to-all
    // One device: the waiting-versus-transfer fields are null.
    EXPECT_TRUE(d["totals"]["comm_wait_ns"].is_null());
    EXPECT_TRUE(d["totals"]["last_arrivals"].is_null());
    expectMetrics(d["totals"], a.devices[0].totals);

    ASSERT_EQ(d["steps"].size(), 2u);
    const auto& s = d["steps"][1];
    EXPECT_EQ(s["name"], "step 1");
    EXPECT_EQ(s["start_ns"], 30'000'000);
    EXPECT_EQ(s["end_ns"], 60'000'000);
    expectMetrics(s, a.devices[0].steps[1].metrics);  // metrics inline in the step
    EXPECT_EQ(s["bottleneck"]["collective"], 3);
    EXPECT_EQ(s["bottleneck"]["name"], "AllReduce f32");
    EXPECT_EQ(s["bottleneck"]["exposed_ns"], 1'100'000);
    EXPECT_NEAR(s["bottleneck"]["share"].get<double>(), 1.1 / 1.6, 1e-12);
    EXPECT_EQ(s["bottleneck"]["verdict"], "compute-bound");
    ASSERT_EQ(s["bottleneck"]["findings"].size(), 1u);
    EXPECT_EQ(s["bottleneck"]["findings"][0]["kind"], "comm-after-last-compute");

    ASSERT_EQ(d["collectives"].size(), 4u);
    const auto& c = d["collectives"][3];
    EXPECT_EQ(c["collective"], "AllReduce");
    EXPECT_EQ(c["datatype"], "f32");
    EXPECT_EQ(c["start_ns"], 38'000'000);
    EXPECT_EQ(c["end_ns"], 42'000'000);
    EXPECT_EQ(c["duration_ns"], 4'000'000);
    EXPECT_EQ(c["overlapped_ns"], 2'900'000);
    EXPECT_EQ(c["exposed_ns"], 1'100'000);
    EXPECT_EQ(c["bytes"], 32ull << 20);
    EXPECT_EQ(c["comm_hash"], "0xabcdef0123456789");
    EXPECT_EQ(c["seq_number"], 38'000);
    EXPECT_EQ(c["step"], 1);
    EXPECT_EQ(c["stream"], 13);

    // Device-level additions.
    EXPECT_EQ(d["label"], "rank 0 gpu 0");
    EXPECT_EQ(d["verdict"], "compute-bound");
    EXPECT_EQ(d["bottleneck"]["name"], "AllReduce f32 bucket #1");
    EXPECT_EQ(d["bottleneck"]["exposed_ns"], 3'100'000);
}

TEST(ReportJson, NullRatiosAndMultiRankFields) {
    const auto a = fixture::twoDeviceAnalysis();
    const auto j = reportOf(a);
    const auto& t = j["devices"][1]["totals"];
    EXPECT_TRUE(t["overlap_ratio"].is_null());  // no communication on rank 1
    EXPECT_EQ(t["comm_ns"], 0);
    EXPECT_TRUE(j["devices"][1]["bottleneck"].is_null());
    expectMetrics(j["summary"], a.summary);
    EXPECT_EQ(j["summary"]["device_count"], 2);
    ASSERT_EQ(j["matched_collectives"].size(), 1u);
    const auto& m = j["matched_collectives"][0];
    EXPECT_EQ(m["collective"], "AllReduce");
    EXPECT_EQ(m["seq_number"], 7);
    EXPECT_EQ(m["skew_ns"], 250'000);
    EXPECT_EQ(m["transfer_ns"], 3'000'000);
    EXPECT_EQ(m["instances"][1]["device"], 1);
    EXPECT_EQ(m["instances"][1]["collective"], 0);
    EXPECT_EQ(j["total_skew_ns"], 250'000);
    EXPECT_EQ(j["spread"]["step_time_median_ns"], 30'000'000);
    EXPECT_DOUBLE_EQ(j["spread"]["overlap_ratio_max"].get<double>(), 0.7);
}

TEST(ReportJson, ReadBackGivesTheSameValues) {
    const auto a = fixture::twoDeviceAnalysis();
    ReportOptions o;
    o.inputs = {"x.sqlite"};
    const auto back = parseReportJson(formatJsonReport(a, o), "mem");
    EXPECT_EQ(back.version, 1);
    EXPECT_EQ(back.inputs, std::vector<std::string>{"x.sqlite"});
    const auto& b = back.analysis;
    ASSERT_EQ(b.devices.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        const auto& x = a.devices[i];
        const auto& y = b.devices[i];
        EXPECT_EQ(y.rank, x.rank);
        EXPECT_EQ(y.host, x.host);
        EXPECT_EQ(y.pid, x.pid);
        EXPECT_EQ(y.device, x.device);
        EXPECT_EQ(y.totals.exposed_comm_ns, x.totals.exposed_comm_ns);
        EXPECT_EQ(y.totals.overlap_ratio, x.totals.overlap_ratio);
        EXPECT_EQ(y.totals.ideal_speedup, x.totals.ideal_speedup);
        ASSERT_EQ(y.steps.size(), x.steps.size());
        for (size_t s = 0; s < x.steps.size(); ++s) {
            EXPECT_EQ(y.steps[s].name, x.steps[s].name);
            EXPECT_EQ(y.steps[s].metrics.comm_ns, x.steps[s].metrics.comm_ns);
            EXPECT_EQ(y.steps[s].bottleneck.collective, x.steps[s].bottleneck.collective);
            EXPECT_EQ(y.steps[s].bottleneck.findings.size(), x.steps[s].bottleneck.findings.size());
        }
        ASSERT_EQ(y.collectives.size(), x.collectives.size());
        for (size_t c = 0; c < x.collectives.size(); ++c) {
            EXPECT_EQ(y.collectives[c].start_ns, x.collectives[c].start_ns);
            EXPECT_EQ(y.collectives[c].exposed_ns, x.collectives[c].exposed_ns);
            EXPECT_EQ(y.collectives[c].commHash, x.collectives[c].commHash);
            EXPECT_EQ(y.collectives[c].seqNumber, x.collectives[c].seqNumber);
            EXPECT_EQ(y.collectives[c].bytes, x.collectives[c].bytes);
            EXPECT_EQ(y.collectives[c].step, x.collectives[c].step);
        }
    }
    EXPECT_EQ(b.summary.overlap_ns, a.summary.overlap_ns);
    ASSERT_EQ(b.matched.size(), 1u);
    EXPECT_EQ(b.matched[0].instances, a.matched[0].instances);
    EXPECT_EQ(b.total_skew_ns, 250'000);
    ASSERT_TRUE(b.spread);
    EXPECT_EQ(b.spread->overlap_ratio_min, 0.5);
}

// Issue 28 item 3: a device whose file names no rank, host or process
// (a Kineto trace without distributedInfo, an export without a pid) says
// null, not -1, "" or 0; reading it back restores the in-memory "unknown".
TEST(ReportJson, UnknownRankHostAndPidAreNull) {
    auto a = fixture::oneDeviceAnalysis();
    a.devices[0].rank = -1;
    a.devices[0].host.clear();
    a.devices[0].pid = 0;
    const auto j = reportOf(a);
    const auto& d = j["devices"][0];
    EXPECT_TRUE(d["rank"].is_null());
    EXPECT_TRUE(d["host"].is_null());
    EXPECT_TRUE(d["pid"].is_null());
    EXPECT_EQ(d["device"], 0);
    const auto back = parseReportJson(j.dump(), "mem").analysis;
    ASSERT_EQ(back.devices.size(), 1u);
    EXPECT_EQ(back.devices[0].rank, -1);
    EXPECT_EQ(back.devices[0].host, "");
    EXPECT_EQ(back.devices[0].pid, 0);
}

// Issue 28 item 3: waiting with SendRecv kernels that have no peer is
// unknown; the JSON says null and how many kernels lacked one, and a report
// read back (check --baseline, diff, merged partials) says the same.
TEST(ReportJson, UnknownWaitingKeepsItsCountThroughTheFile) {
    auto a = fixture::twoDeviceAnalysis();
    a.devices[0].wait = WaitTransferMetrics{5'000, 3'000, 1'000, 0};
    a.devices[1].wait = WaitTransferMetrics{4'000, 2'000, 7'000, 62};
    const auto j = reportOf(a);
    const auto& known = j["devices"][0]["totals"];
    EXPECT_EQ(known["exposed_wait_ns"], 3'000);
    EXPECT_EQ(known["kernels_without_peer"], 0);
    const auto& unknown = j["devices"][1]["totals"];
    for (const char* k : {"comm_wait_ns", "exposed_wait_ns", "exposed_transfer_ns"})
        EXPECT_TRUE(unknown[k].is_null()) << k;
    EXPECT_EQ(unknown["kernels_without_peer"], 62);
    const auto back = parseReportJson(j.dump(), "mem").analysis;
    ASSERT_TRUE(back.devices[0].wait);
    EXPECT_TRUE(back.devices[0].wait->known());
    EXPECT_EQ(back.devices[0].wait->exposed_wait_ns, 3'000);
    ASSERT_TRUE(back.devices[1].wait);
    EXPECT_FALSE(back.devices[1].wait->known());
    EXPECT_EQ(back.devices[1].wait->kernels_without_peer, 62);
    // One device: no waiting at all, and no count.
    const auto one = reportOf(fixture::oneDeviceAnalysis());
    EXPECT_TRUE(one["devices"][0]["totals"]["kernels_without_peer"].is_null());
    EXPECT_FALSE(parseReportJson(one.dump(), "mem").analysis.devices[0].wait);
    // A negative count is damage, named by its place.
    auto bad = j;
    bad["devices"][1]["totals"]["kernels_without_peer"] = -1;
    try {
        parseReportJson(bad.dump(), "base.json");
        ADD_FAILURE() << "a negative count was accepted";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("devices[1].totals.kernels_without_peer is not a count"),
                  std::string::npos)
            << e.what();
    }
}

TEST(ReportJson, ReadFromFile) {
    const testsupport::TempDir dir;
    const auto path = dir / "ok.json";
    {
        std::ofstream out(path);
        out << formatJsonReport(fixture::oneDeviceAnalysis(), ReportOptions{});
    }
    const auto back = readReportJson(path);
    EXPECT_EQ(back.analysis.devices.size(), 1u);
}

TEST(ReportJson, BadInputNamesTheFileAndTheProblem) {
    auto problem = [](const std::string& text) {
        try {
            parseReportJson(text, "base.json");
        } catch (const CaptureError& e) {
            EXPECT_EQ(e.path(), "base.json");
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(problem("{not json").find("base.json: not JSON"), std::string::npos);
    EXPECT_NE(problem(R"({"format":"chrome"})").find("not an overlapscope report"), std::string::npos);
    EXPECT_NE(problem(R"({"format":"overlapscope-report","version":2,"devices":[],"summary":{}})")
                  .find("report version 2 is newer"),
              std::string::npos);
    // A missing field is named by its place in the document.
    auto j = json::parse(formatJsonReport(fixture::oneDeviceAnalysis(), ReportOptions{}));
    j["devices"][0]["totals"].erase("comm_ns");
    EXPECT_NE(problem(j.dump()).find("devices[0].totals.comm_ns is missing"), std::string::npos);
    j = json::parse(formatJsonReport(fixture::oneDeviceAnalysis(), ReportOptions{}));
    j["devices"][0]["steps"][1]["exposed_comm_ns"] = "many";
    EXPECT_NE(problem(j.dump()).find("devices[0].steps[1].exposed_comm_ns is not an integer"), std::string::npos);
    const testsupport::TempDir dir;
    EXPECT_THROW(readReportJson(dir / "does-not-exist.json"), CaptureError);
}

// Issue 29 item 6: numbers no analysis can give are bad input, named by
// their place, not read on (a ratio of 7 passed `check` and showed as 700%
// in `diff`).
TEST(ReportJson, ImpossibleNumbersAreNamed) {
    const json good = json::parse(formatJsonReport(fixture::oneDeviceAnalysis(), ReportOptions{}));
    ASSERT_NO_THROW(parseReportJson(good.dump(), "base.json"));
    const std::vector<Refusal> cases = {
        {"/devices/0/totals/overlap_ratio"_json_pointer, 7, "devices[0].totals.overlap_ratio is 7, outside 0 to 1"},
        {"/devices/0/totals/overlap_ratio"_json_pointer, -3, "devices[0].totals.overlap_ratio is -3, outside 0 to 1"},
        {"/summary/overlap_ratio"_json_pointer, 1.5, "summary.overlap_ratio is 1.5, outside 0 to 1"},
        {"/devices/0/steps/1/overlap_ratio"_json_pointer, -0.25,
         "devices[0].steps[1].overlap_ratio is -0.25, outside 0 to 1"},
        {"/devices/0/totals/exposed_comm_ns"_json_pointer, -5,
         "devices[0].totals.exposed_comm_ns is -5, a negative duration"},
        {"/summary/comm_ns"_json_pointer, -1, "summary.comm_ns is -1, a negative duration"},
        {"/devices/0/steps/0/exposed_comm_ns"_json_pointer, -100,
         "devices[0].steps[0].exposed_comm_ns is -100, a negative duration"},
        {"/devices/0/totals/ideal_speedup"_json_pointer, -2, "devices[0].totals.ideal_speedup is -2, below zero"},
    };
    expectRefused(good, cases);
    // Exactly 0 and 1 are possible (nothing hidden, everything hidden).
    for (const double edge : {0.0, 1.0}) {
        json ok = good;
        ok["devices"][0]["totals"]["overlap_ratio"] = edge;
        EXPECT_NO_THROW(parseReportJson(ok.dump(), "base.json")) << edge;
    }
    // A number too large for a double is bad input too, not an internal error.
    std::string text = good.dump();
    const std::string key = "\"overlap_ratio\":";
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    const size_t end = text.find_first_of(",}", at);
    text.replace(at + key.size(), end - at - key.size(), "1e999");
    try {
        parseReportJson(text, "base.json");
        ADD_FAILURE() << "1e999 was read";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("base.json: not JSON"), std::string::npos) << e.what();
    }
}

// Issue 42: the section 4d figures are checked as the older ones are: a
// fraction of the link's peak of 5 passed `check --min-busbw-fraction`,
// 1e308 GB/s and negative times were read on.
TEST(ReportJson, ImpossibleBusBandwidthAndStragglerFiguresAreNamed) {
    Analysis a = fixture::oneDeviceAnalysis();
    DeviceAnalysis& d = a.devices[0];
    CollectiveInstance& c = d.collectives[0];
    c.algbw_gbps = 134.2;
    c.busbw_gbps = 234.9;
    c.busbw_fraction = 0.52;
    c.busbw_basis = BusBwBasis::Transfer;
    BusBandwidth b;
    b.peak_busbw_gbps = 450;
    b.link = "NVLink 4 (H100 SXM)";
    b.measured = 1;
    b.median_algbw_gbps = 134.2;
    b.median_busbw_gbps = 234.9;
    b.median_busbw_fraction = 0.52;
    b.schedule_limit_exposed_ns = 1'000'000;
    b.classes.push_back({"AllReduce", 256u << 20, 1, 134.2, 234.9, 0.52});
    d.busbw = b;
    StragglerMetrics s;
    s.late_arrivals = 2;
    s.late_ns = 5'000'000;
    s.late_start_ns = -1'000'000;  // parts are differences: may be negative
    s.worst.collective = "AllReduce";
    s.worst.late_ns = 4'000'000;
    s.worst.delay_ns = 3'000'000;
    s.worst.medianLabel = "rank 1 gpu 1";
    s.worst.kernels = {{"gemm", 1'500'000}};
    d.straggler = s;
    a.settings.peakBusBwGbps = 450;
    const json good = json::parse(formatJsonReport(a, ReportOptions{}));
    ASSERT_NO_THROW(parseReportJson(good.dump(), "base.json"));
    const std::vector<Refusal> cases = {
        {"/devices/0/busbw/median_busbw_fraction"_json_pointer, 5,
         "devices[0].busbw.median_busbw_fraction is 5, outside 0 to 2 (a fraction of the link's peak)"},
        {"/devices/0/busbw/by_size/0/median_busbw_fraction"_json_pointer, -0.5,
         "devices[0].busbw.by_size[0].median_busbw_fraction is -0.5, outside 0 to 2 (a fraction of the link's "
         "peak)"},
        {"/devices/0/collectives/0/busbw_fraction"_json_pointer, 2.5,
         "devices[0].collectives[0].busbw_fraction is 2.5, outside 0 to 2 (a fraction of the link's peak)"},
        {"/devices/0/collectives/0/algbw_gbps"_json_pointer, 1e308,
         "devices[0].collectives[0].algbw_gbps is 1e+308, more GB/s than any transfer"},
        {"/devices/0/collectives/0/busbw_gbps"_json_pointer, -3,
         "devices[0].collectives[0].busbw_gbps is -3, below zero"},
        {"/devices/0/collectives/0/bandwidth_gbps"_json_pointer, -1,
         "devices[0].collectives[0].bandwidth_gbps is -1, below zero"},
        {"/devices/0/busbw/median_busbw_gbps"_json_pointer, 1e300,
         "devices[0].busbw.median_busbw_gbps is 1e+300, more GB/s than any transfer"},
        {"/devices/0/busbw/peak_busbw_gbps"_json_pointer, 0,
         "devices[0].busbw.peak_busbw_gbps is 0, not a positive bandwidth"},
        {"/devices/0/busbw/link"_json_pointer, "", "devices[0].busbw.link is empty while peak_busbw_gbps is given"},
        {"/devices/0/busbw/bandwidth_limit_exposed_ns"_json_pointer, -1,
         "devices[0].busbw.bandwidth_limit_exposed_ns is -1, a negative duration"},
        {"/devices/0/busbw/schedule_limit_exposed_ns"_json_pointer, -2,
         "devices[0].busbw.schedule_limit_exposed_ns is -2, a negative duration"},
        {"/devices/0/busbw/measured"_json_pointer, -4, "devices[0].busbw.measured is -4, not a count"},
        {"/devices/0/busbw/by_size/0/count"_json_pointer, -1, "devices[0].busbw.by_size[0].count is -1, not a count"},
        {"/devices/0/straggler/late_ns"_json_pointer, -5, "devices[0].straggler.late_ns is -5, a negative duration"},
        {"/devices/0/straggler/late_arrivals"_json_pointer, -1,
         "devices[0].straggler.late_arrivals is -1, not a count"},
        {"/devices/0/straggler/late_arrivals"_json_pointer, 0,
         "devices[0].straggler.late_arrivals is 0 in a straggler (null when it never arrived last)"},
        {"/devices/0/straggler/worst/late_ns"_json_pointer, -1,
         "devices[0].straggler.worst.late_ns is -1, a negative duration"},
        {"/devices/0/straggler/worst/delay_ns"_json_pointer, -7,
         "devices[0].straggler.worst.delay_ns is -7, a negative duration"},
        {"/devices/0/straggler/worst/kernels/0/ns"_json_pointer, -3,
         "devices[0].straggler.worst.kernels[0].ns is -3, a negative duration"},
        {"/settings/peak_busbw_gbps"_json_pointer, -4, "settings.peak_busbw_gbps is -4, below zero"},
        {"/settings/peak_busbw_gbps"_json_pointer, 0, "settings.peak_busbw_gbps is 0, not a positive bandwidth"},
    };
    expectRefused(good, cases);
    // Past the unidirectional peak (NVLink SHARP), up to twice it, is read;
    // so are null figures and a negative part of the lateness.
    for (const double edge : {0.0, 1.07, 2.0}) {
        json ok = good;
        ok["devices"][0]["busbw"]["median_busbw_fraction"] = edge;
        EXPECT_NO_THROW(parseReportJson(ok.dump(), "base.json")) << edge;
    }
    json nulls = good;
    nulls["devices"][0]["busbw"]["median_busbw_fraction"] = nullptr;
    nulls["devices"][0]["collectives"][0]["algbw_gbps"] = nullptr;
    const auto back = parseReportJson(nulls.dump(), "base.json").analysis.devices[0];
    EXPECT_FALSE(back.busbw->median_busbw_fraction);
    EXPECT_FALSE(back.collectives[0].algbw_gbps);
    EXPECT_EQ(back.straggler->late_start_ns, -1'000'000);
}

TEST(ReportJson, StreamedOutputIsExactlyTheIndentedDocument) {
    // The writer streams piece by piece; the result must be what a JSON
    // library prints for the same document with a 2-space indent.
    for (const auto& a : {fixture::oneDeviceAnalysis(), fixture::twoDeviceAnalysis(), Analysis{}}) {
        const auto text = formatJsonReport(a, ReportOptions{});
        EXPECT_EQ(text, nlohmann::ordered_json::parse(text).dump(2) + "\n");
    }
}

// Issue 40: a report of many devices has its devices' text parsed apart, on
// several threads (json_member_spans.h). The spans, against hand-made text.
TEST(ReportJson, ArraySpansFollowStringsAndNesting) {
    const std::string text = R"( {"a": "[\"]", "b": {"devices": [9]}, "devices" : [ {"x": "]"} , [1, 2],3 ], "c": 1} )";
    const auto spans = topLevelArraySpans(text, "devices");
    ASSERT_TRUE(spans);
    EXPECT_EQ(text[spans->open], '[');
    EXPECT_EQ(text[spans->close], ']');
    ASSERT_EQ(spans->items.size(), 3u);
    const auto item = [&](size_t i) {
        return text.substr(spans->items[i].first, spans->items[i].second - spans->items[i].first);
    };
    EXPECT_EQ(item(0), R"({"x": "]"})");
    EXPECT_EQ(item(1), "[1, 2]");
    EXPECT_EQ(item(2), "3");
    EXPECT_TRUE(topLevelArraySpans(R"({"devices": []})", "devices")->items.empty());
    // Not an object, no such member, not an array, twice, broken or followed by more: no spans.
    for (const char* bad :
         {R"([{"devices": [1]}])", R"({"other": [1]})", R"({"devices": 1})", R"({"devices": [1], "devices": [2]})",
          R"({"devices": [1, 2)", R"({"devices": ["1]})", R"({"devices": [1,]})", R"({"devices": [1]} x)"})
        EXPECT_FALSE(topLevelArraySpans(bad, "devices")) << bad;
}

// `n` copies of the fixture's devices with their own ranks and numbers: a
// document over kSplitReportBytes.
Analysis manyDevices(int n) {
    const Analysis two = fixture::twoDeviceAnalysis();
    Analysis a = two;
    a.devices.clear();
    for (int i = 0; i < n; ++i) {
        DeviceAnalysis d = two.devices[static_cast<size_t>(i % 2)];
        d.rank = i;
        d.pid = 1000 + i;
        d.totals.exposed_comm_ns += i;
        if (!d.steps.empty()) d.steps[0].metrics.compute_ns += 7 * i;
        a.devices.push_back(std::move(d));
    }
    return a;
}

TEST(ReportJson, AReportOfManyDevicesReadsBackAsWritten) {
    const Analysis a = manyDevices(900);
    const std::string text = formatJsonReport(a, ReportOptions{});
    ASSERT_GE(text.size(), kSplitReportBytes) << "the devices must be read apart";
    const auto back = parseReportJson(text, "big.json");
    ASSERT_EQ(back.analysis.devices.size(), 900u);
    for (size_t i = 0; i < 900; ++i) {
        const DeviceAnalysis& y = back.analysis.devices[i];
        EXPECT_EQ(y.rank, static_cast<int>(i));
        EXPECT_EQ(y.pid, 1000 + static_cast<int64_t>(i));
        EXPECT_EQ(y.processIndex, static_cast<int>(i));
        EXPECT_EQ(y.totals.exposed_comm_ns, a.devices[i].totals.exposed_comm_ns);
        ASSERT_EQ(y.steps.size(), a.devices[i].steps.size());
        if (!y.steps.empty()) {
            EXPECT_EQ(y.steps[0].metrics.compute_ns, a.devices[i].steps[0].metrics.compute_ns);
        }
    }
    // Every field of every device, as the writer writes it, against the
    // device that was written (with a null wait read as unknown waiting,
    // which is what a report of two devices or more means by it).
    const auto deviceText = [](DeviceAnalysis d) {
        const WaitTransferMetrics unknown{0, 0, 0, -1};
        if (!d.wait) d.wait = unknown;
        for (auto& st : d.steps)
            if (!st.wait) st.wait = unknown;
        std::ostringstream out;
        writeDeviceJson(out, d, -1);
        return out.str();
    };
    for (size_t i = 0; i < 900; ++i)
        EXPECT_EQ(deviceText(back.analysis.devices[i]), deviceText(a.devices[i])) << "device " << i;
}

// The text of a stream written across several 4 MiB blocks, by characters
// and by runs of every length, reads back the same, and again after clear().
TEST(ReportJson, TextBlocksHoldWhatWasWrittenAcrossBlocks) {
    TextBlocks blocks;
    for (int round = 0; round < 2; ++round) {
        blocks.clear();
        std::ostream out(&blocks);
        std::string want;
        uint32_t x = 12345 + static_cast<uint32_t>(round);
        while (want.size() < 9'500'000) {
            x = x * 1664525u + 1013904223u;
            const size_t n = x % 3 == 0 ? 1 : (x >> 8) % 300'000;
            const std::string piece(n, static_cast<char>('a' + x % 26));
            if (n == 1)
                out.put(piece[0]);
            else
                out.write(piece.data(), static_cast<std::streamsize>(n));
            want += piece;
        }
        std::string got;
        blocks.forEachPiece([&](const char* p, size_t n) { got.append(p, n); });
        EXPECT_EQ(blocks.size(), want.size());
        EXPECT_TRUE(got == want) << "round " << round;
        std::ostringstream copy;
        blocks.writeTo(copy);
        EXPECT_TRUE(copy.str() == want);
    }
    blocks.clear();
    EXPECT_EQ(blocks.size(), 0u);
}

// The devices rendered on threads, ahead of the one written: the bytes the
// writer of one thread writes, whatever the thread and device counts.
TEST(ReportJson, DevicesRenderedOnThreadsGiveTheSameDocument) {
    ReportOptions o;
    o.inputs = {"dir/"};
    for (const int devices : {0, 1, 2, 7, 40}) {
        const Analysis a = manyDevices(devices);
        const std::string one = formatJsonReport(a, o);
        for (const int threads : {1, 2, 3, 8}) {
            std::ostringstream out;
            writeJsonReportOnThreads(out, a, o, threads);
            EXPECT_EQ(out.str(), one) << devices << " devices, " << threads << " threads";
        }
    }
}

// Devices whose objects outgrow how much may wait rendered (64 MB): the
// renderers wait for the writer, none for ever, and the bytes stay the
// single thread's.
TEST(ReportJson, DevicesLargerThanWhatMayWaitRenderedComeOutInOrder) {
    Analysis a = manyDevices(6);
    std::vector<CollectiveInstance> some;
    for (const auto& d : a.devices) some.insert(some.end(), d.collectives.begin(), d.collectives.end());
    ASSERT_FALSE(some.empty());
    for (auto& d : a.devices)
        while (d.collectives.size() < 30'000) d.collectives.insert(d.collectives.end(), some.begin(), some.end());
    const std::string one = formatJsonReport(a, ReportOptions{});
    ASSERT_GT(one.size(), size_t{80} << 20) << "more than may wait rendered";
    for (const int threads : {2, 3}) {
        std::ostringstream out;
        writeJsonReportOnThreads(out, a, ReportOptions{}, threads);
        EXPECT_TRUE(out.str() == one) << threads << " threads";
    }
}

// Fewer devices than threads: each device's collectives rendered run by run
// on the threads (one large PyTorch trace is one device), the same bytes as
// one thread's, on one line too.
TEST(ReportJson, CollectivesRenderedOnThreadsGiveTheSameDocument) {
    Analysis a = manyDevices(2);
    std::vector<CollectiveInstance> some;
    for (const auto& d : a.devices) some.insert(some.end(), d.collectives.begin(), d.collectives.end());
    ASSERT_FALSE(some.empty());
    // 9 runs of 2,048 and a part one on the first device; too few for runs on the second.
    while (a.devices[0].collectives.size() < 18'500)
        a.devices[0].collectives.insert(a.devices[0].collectives.end(), some.begin(), some.end());
    a.devices[0].collectives.resize(18'500);
    for (size_t i = 0; i < a.devices[0].collectives.size(); ++i) a.devices[0].collectives[i].start_ns += int64_t(i);
    const std::string one = formatJsonReport(a, ReportOptions{});
    for (const int threads : {3, 4, 8}) {
        std::ostringstream out;
        writeJsonReportOnThreads(out, a, ReportOptions{}, threads);
        EXPECT_TRUE(out.str() == one) << threads << " threads";
    }
    for (const int indent : {-1, 0, 6}) {
        std::ostringstream single, threaded;
        writeDeviceJson(single, a.devices[0], indent);
        writeDeviceJson(threaded, a.devices[0], indent, 2);
        EXPECT_TRUE(threaded.str() == single.str()) << "indent " << indent;
        EXPECT_EQ(json::parse(threaded.str())["collectives"].size(), 18'500u);
    }
}

TEST(ReportJson, AReportOfManyDevicesNamesItsFirstProblem) {
    auto j = json::parse(formatJsonReport(manyDevices(900), ReportOptions{}));
    const auto problem = [](const std::string& text) {
        try {
            parseReportJson(text, "big.json");
        } catch (const CaptureError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    j["devices"][700]["totals"].erase("comm_ns");
    j["devices"][170]["steps"][0]["exposed_comm_ns"] = "many";
    const std::string two = j.dump();
    ASSERT_GE(two.size(), kSplitReportBytes);
    EXPECT_NE(problem(two).find("big.json: not a valid overlapscope report: devices[170].steps[0].exposed_comm_ns is "
                                "not an integer"),
              std::string::npos)
        << problem(two);
    // Not JSON inside one device: the message places it in the whole file.
    std::string broken = j.dump();
    const size_t at = broken.find("\"pid\":1600");
    ASSERT_NE(at, std::string::npos);
    broken.replace(at, 10, "\"pid\":@@@@");
    const std::string message = problem(broken);
    EXPECT_NE(message.find("big.json: not JSON"), std::string::npos) << message;
    EXPECT_NE(message.find("column " + std::to_string(at + 7)), std::string::npos) << message;
}

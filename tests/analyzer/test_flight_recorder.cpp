// PyTorch Flight Recorder dumps: the reader on dumps of every layout we know
// (versions 2.3, 2.4, 2.7, 2.10, and a pickled dump converted to JSON), what
// it refuses, how the input sniffer tells a dump from a PyTorch profiler
// trace, and the hang analysis on dumps with hand-worked answers.
#include "analyzer/capture/capture_error.h"
#include "analyzer/hang/hang.h"
#include "analyzer/hang/hang_output.h"
#include "analyzer/import/flight_recorder.h"
#include "analyzer/load/input_kind.h"
#include "analyzer/load/load_capture.h"
#include "tests/analyzer/flight_recorder_fixture.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace osc {
namespace {

using test::FrDumpSpec;
using test::FrEntrySpec;
using test::frJson;
using test::writeText;

FrEntrySpec entry(int64_t seq, std::string state, std::string op = "all_reduce",
                  std::vector<std::vector<int64_t>> sizes = {{1024}}) {
    FrEntrySpec e;
    e.seq = seq;
    e.state = std::move(state);
    e.op = std::move(op);
    e.sizes = std::move(sizes);
    e.createdNs = 1'760'000'000'000'000'000 + seq * 1'000'000;
    if (e.state != "scheduled") e.startedNs = e.createdNs + 10'000;
    if (e.state == "completed") e.completedNs = e.createdNs + 500'000;
    return e;
}

class FlightRecorderTest : public ::testing::TestWithParam<std::string> {
protected:
    testsupport::TempDir dir_;
};

TEST_P(FlightRecorderTest, ReadsEveryFieldOfItsVersion) {
    FrDumpSpec d;
    d.version = GetParam();
    d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}, {"1", {"tp", {2, 3}}}};
    d.entries = {entry(1, "completed"), entry(2, "started", "_allgather_base", {{512}, {2048}})};
    d.entries[1].pg = "1";
    d.entries[1].desc = "tp";
    d.entries[1].pgId = 1;
    const std::string path = dir_ / "nccl_trace_rank_3";
    writeText(path, frJson(d));
    EXPECT_EQ(sniff(path), InputKind::FlightRecorderDump);

    const FlightRecorderDump dump = readFlightRecorderDump(path);
    EXPECT_EQ(dump.version, GetParam());
    EXPECT_EQ(dump.rank, 3);
    const int minor = std::stoi(GetParam().substr(2));
    EXPECT_EQ(dump.commLibVersion, minor >= 10 ? "2.21.5" : minor >= 5 ? "2.20.5" : "");
    ASSERT_EQ(dump.groups.size(), 2u);
    EXPECT_EQ(dump.groups.at("0").ranks, (std::vector<int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(dump.groups.at("1").desc, "tp");
    ASSERT_EQ(dump.entries.size(), 2u);
    const FlightRecorderEntry& a = dump.entries[0];
    EXPECT_EQ(a.pgName, "0");
    EXPECT_EQ(a.pgDesc, "default_pg");
    EXPECT_EQ(a.collectiveSeqId, 1);
    EXPECT_EQ(a.profilingName, "nccl:all_reduce");
    EXPECT_EQ(a.state, FlightRecorderEntry::State::Completed);
    EXPECT_EQ(a.timeDiscoveredCompletedNs, d.entries[0].completedNs);
    ASSERT_TRUE(a.durationMs);
    const FlightRecorderEntry& b = dump.entries[1];
    EXPECT_EQ(b.pgName, "1");
    EXPECT_EQ(b.state, FlightRecorderEntry::State::Started);
    EXPECT_FALSE(b.timeDiscoveredCompletedNs);  // 0 in the dump: not yet
    EXPECT_EQ(b.inputSizes, (std::vector<std::vector<int64_t>>{{512}, {2048}}));
    EXPECT_EQ(b.inputDtypes, (std::vector<std::string>{"Float", "Float"}));
    EXPECT_EQ(b.threadName, minor >= 10 ? "pt_main_thread" : "");
    EXPECT_EQ(dump.groupStatus.at(1).lastEnqueued, 2);
}

INSTANTIATE_TEST_SUITE_P(Versions, FlightRecorderTest, ::testing::Values("2.3", "2.4", "2.7", "2.10"));

TEST(FlightRecorder, ReadsAPickledDumpConvertedToJson) {
    testsupport::TempDir dir;
    FrDumpSpec d;
    d.version = "2.4";
    d.pickleConverted = true;
    d.entries = {entry(1, "completed"), entry(2, "scheduled")};
    const std::string path = dir / "trace_7.json";
    writeText(path, frJson(d));
    const FlightRecorderDump dump = readFlightRecorderDump(path);
    EXPECT_EQ(dump.rank, 7);
    EXPECT_FALSE(dump.entries[1].timeDiscoveredStartedNs);  // null
    EXPECT_EQ(dump.groupStatus.at(0).lastCompleted, 1);     // numbers, not strings
}

TEST(FlightRecorder, RefusesWhatItCannotRead) {
    testsupport::TempDir dir;
    const auto refused = [&](const std::string& name, const std::string& text, const std::string& why) {
        const std::string path = dir / name;
        writeText(path, text);
        try {
            readFlightRecorderDump(path);
            ADD_FAILURE() << name << " was read";
        } catch (const CaptureError& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        }
    };
    FrDumpSpec d;
    d.entries = {entry(1, "completed")};
    refused("nccl_trace_rank_0.pkl", std::string("\x80\x02}q\x00X\x07\x00\x00\x00versionq", 20) + "pg_config",
            "pickled Flight Recorder dump");
    refused("no_rank.json", frJson(d), "cannot tell which rank");
    FrDumpSpec v3 = d;
    v3.version = "3.0";
    refused("dump_1", frJson(v3), "version 3.0");
    refused("dump_2", R"({"version": "2.10", "entries": [{"record_id": 0}]})", "process_group");
    refused("dump_3", R"({"version": "2.10", "entries": [{"record_id": "x", "process_group": ["0", ""]}]})",
            "record_id");
    refused("dump_4", R"({"version": "2.10", "entries": [)", "not a valid JSON");
    refused("dump_5", R"({"version": "2.10", "pg_config": {"0": {"ranks": {}}}})", "ranks");
    refused("dump_6",
            R"({"version": "2.10", "entries": [{"record_id": 0, "process_group": ["0", ""], "collective_seq_id": 1,
                "profiling_name": "nccl:all_reduce", "state": "lost"}]})",
            "state");
}

TEST(FlightRecorder, TheSnifferTellsDumpsFromProfilerTraces) {
    testsupport::TempDir dir;
    const auto kind = [&](const std::string& name, const std::string& text) {
        writeText(dir / name, text);
        return sniff(dir / name);
    };
    FrDumpSpec d;
    d.entries = {entry(1, "completed")};
    EXPECT_EQ(kind("a_0", frJson(d)), InputKind::FlightRecorderDump);
    d.version = "2.3";  // no library version: "entries" comes first
    EXPECT_EQ(kind("b_0", frJson(d)), InputKind::FlightRecorderDump);
    d.entries.clear();  // no entries at all
    EXPECT_EQ(kind("c_0", frJson(d)), InputKind::FlightRecorderDump);
    EXPECT_EQ(kind("d_0", "{\n  \"version\": \"2.10\",\n  \"pg_status\": {}\n}"), InputKind::FlightRecorderDump);
    EXPECT_EQ(kind("e_0", std::string("\x80\x04\x95", 3) + "version pg_config"), InputKind::FlightRecorderDump);
    // A profiler trace mentions pg_config inside distributedInfo, not at the top.
    EXPECT_EQ(kind("t.json", R"({"distributedInfo": {"pg_config": [], "rank": 0}, "traceEvents": []})"),
              InputKind::KinetoTrace);
    EXPECT_EQ(kind("u.json", R"({"traceEvents": [{"name": "entries", "args": {"entries": 1}}]})"),
              InputKind::KinetoTrace);
    // A directory of PyTorch's default names (no extension) is one of dumps.
    std::filesystem::create_directory(dir / "dumps");
    writeText(dir / "dumps/nccl_trace_rank_0", frJson(d));
    writeText(dir / "dumps/nccl_trace_rank_1", frJson(d));
    writeText(dir / "dumps/notes", "not a dump");
    EXPECT_EQ(sniff(dir / "dumps"), InputKind::FlightRecorderDirectory);
    EXPECT_EQ(flightRecorderFilesIn(dir / "dumps").size(), 2u);
    // Other commands refuse a dump in one line.
    try {
        loadCapture(dir / "a_0");
        ADD_FAILURE();
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("overlapscope hang"), std::string::npos);
    }
}

// docs/design.md 4d's example on dumps: four ranks of the default group,
// ranks 0-2 entered 17 and never completed it, rank 3's last is 16.
TEST(FlightRecorderHang, TheDesignExample) {
    std::vector<FlightRecorderDump> dumps;
    testsupport::TempDir dir;
    for (int r = 0; r < 4; ++r) {
        FrDumpSpec d;
        d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}};
        for (int s = 1; s <= 16; ++s) d.entries.push_back(entry(s, "completed"));
        if (r != 3) d.entries.push_back(entry(17, "started"));
        writeText(dir / ("nccl_trace_rank_" + std::to_string(r)), frJson(d));
        dumps.push_back(readFlightRecorderDump(dir / ("nccl_trace_rank_" + std::to_string(r))));
    }
    const hang::HangAnalysis a = hang::analyzeHang(nullptr, dumps);
    EXPECT_EQ(a.verdict, hang::Verdict::Hang);
    ASSERT_EQ(a.stuck.size(), 1u);
    EXPECT_EQ(a.stuck[0].rank, 3);
    EXPECT_EQ(a.stuck[0].commRank, 3);
    ASSERT_EQ(a.firstMissingCommunicator, 0);
    EXPECT_EQ(a.communicators[0].id, "pg 0 (default_pg)");
    EXPECT_EQ(a.hung[0]->slot.seq, 17u);
    EXPECT_EQ(a.hung[0]->collective, "all_reduce");
    EXPECT_EQ(a.hung[0]->waitingRanks.size(), 3u);
    // The stuck rank's host, as far as a dump tells: its newest entry.
    const hang::RankProgress& r3 = a.communicators[0].ranks[3];
    ASSERT_TRUE(r3.host.flightRecorderEntry);
    EXPECT_NE(r3.host.flightRecorderEntry->name.find("seq 16"), std::string::npos);

    // The same, but rank 2 entered 17 as an all-gather: a desync, nobody stuck.
    dumps[2].entries.back().profilingName = "nccl:_allgather_base";
    dumps[3].entries.push_back(dumps[0].entries.back());
    const hang::HangAnalysis b = hang::analyzeHang(nullptr, dumps);
    EXPECT_EQ(b.verdict, hang::Verdict::Desync);
    ASSERT_EQ(b.desyncs.size(), 1u);
    EXPECT_EQ(b.desyncs[0].field, "collective");
    EXPECT_EQ(b.desyncs[0].slot.seq, 17u);
    EXPECT_TRUE(b.stuck.empty());
}

// A rank the group lists but no dump holds is stuck as far as anyone knows;
// sizes and dtypes that differ are desyncs; a coalesced call is one call.
TEST(FlightRecorderHang, MissingDumpsSizesAndCoalescedCalls) {
    testsupport::TempDir dir;
    std::vector<FlightRecorderDump> dumps;
    for (int r = 0; r < 2; ++r) {
        FrDumpSpec d;
        d.groups = {{"0", {"default_pg", {0, 1, 2}}}};
        d.entries = {entry(1, "completed"),
                     entry(2, "completed", "all_gather", {{r == 1 ? 2048 : 1024}}),
                     entry(3, "completed", "broadcast"),
                     entry(3, "completed", "broadcast"),
                     entry(3, "completed", "coalesced", {}),
                     entry(4, "scheduled")};
        d.entries[2].dtype = r == 0 ? "Float" : "Int";  // same size, another type
        const std::string f = dir / ("nccl_trace_rank_" + std::to_string(r));
        writeText(f, frJson(d));
        dumps.push_back(readFlightRecorderDump(f));
    }
    const hang::HangAnalysis a = hang::analyzeHang(nullptr, dumps);
    EXPECT_EQ(a.verdict, hang::Verdict::Hang);
    ASSERT_EQ(a.stuck.size(), 1u);
    EXPECT_EQ(a.stuck[0].member, -1);  // in no input
    EXPECT_EQ(a.stuck[0].commRank, 2);
    EXPECT_EQ(a.hung[0]->slot.seq, 4u);
    ASSERT_EQ(a.communicators[0].ranks[0].calls.size(), 4u);  // 1, 2, the coalesced 3, 4
    EXPECT_EQ(a.communicators[0].ranks[0].calls[2].collective, "broadcast (coalesced, 3 ops)");
    ASSERT_EQ(a.desyncs.size(), 2u);
    EXPECT_EQ(a.desyncs[0].field, "bytes");
    EXPECT_EQ(a.desyncs[0].slot.seq, 2u);
    EXPECT_EQ(*a.desyncs[0].parts[1].bytes, 8192u);
    EXPECT_EQ(a.desyncs[1].field, "dtype");
}

// The same call number entered as another collective (every call
// completed, so no rank is stuck): a desync on the collective's type.
TEST(FlightRecorderHang, AnotherCollectiveOnTheSameNumberIsADesync) {
    testsupport::TempDir dir;
    std::vector<FlightRecorderDump> dumps;
    for (int r = 0; r < 3; ++r) {
        FrDumpSpec d;
        d.groups = {{"0", {"default_pg", {0, 1, 2}}}};
        d.entries = {entry(1, "completed"), entry(2, "completed", r == 1 ? "all_gather" : "all_reduce"),
                     entry(3, "completed")};
        const std::string f = dir / ("nccl_trace_rank_" + std::to_string(r));
        writeText(f, frJson(d));
        dumps.push_back(readFlightRecorderDump(f));
    }
    const hang::HangAnalysis a = hang::analyzeHang(nullptr, dumps);
    EXPECT_EQ(a.verdict, hang::Verdict::Desync);
    EXPECT_TRUE(a.stuck.empty());
    ASSERT_EQ(a.desyncs.size(), 1u);
    EXPECT_EQ(a.desyncs[0].field, "collective");
    EXPECT_EQ(a.desyncs[0].slot.seq, 2u);
    ASSERT_EQ(a.desyncs[0].parts.size(), 3u);
    EXPECT_NE(a.desyncs[0].parts[1].collective.find("all_gather"), std::string::npos);
    EXPECT_NE(a.desyncs[0].parts[0].collective.find("all_reduce"), std::string::npos);
    EXPECT_EQ(a.desyncs[0].parts[0].collective, a.desyncs[0].parts[2].collective);
}

// Dumps record no time of their own: the text gives no wait time (it would
// read 0 ns, the newest entry being the wait itself), and a call that one
// rank completed and another not is not said to be completed by none.
TEST(FlightRecorderHang, TheTextClaimsNoTimeAndNoCompletionTheDumpsDoNotHold) {
    testsupport::TempDir dir;
    auto dumpsOf = [&](const std::string& name, int ranks, auto entriesOf) {
        std::vector<FlightRecorderDump> dumps;
        for (int r = 0; r < ranks; ++r) {
            FrDumpSpec d;
            std::vector<int> members(static_cast<size_t>(ranks));
            for (int m = 0; m < ranks; ++m) members[static_cast<size_t>(m)] = m;
            d.groups = {{"0", {"default_pg", members}}};
            d.entries = entriesOf(r);
            const std::string f = dir / (name + "_rank_" + std::to_string(r));
            writeText(f, frJson(d));
            dumps.push_back(readFlightRecorderDump(f));
        }
        return dumps;
    };
    // Ranks 0 and 1 wait in #2, rank 2 never called it.
    const hang::HangAnalysis stalled = hang::analyzeHang(nullptr, dumpsOf("stall", 3, [](int r) {
                                                             std::vector<FrEntrySpec> e = {entry(1, "completed")};
                                                             if (r < 2) e.push_back(entry(2, "started"));
                                                             return e;
                                                         }));
    EXPECT_EQ(stalled.verdict, hang::Verdict::Hang);
    EXPECT_FALSE(stalled.endKnown);
    const std::string text = hang::formatHangText(stalled);
    EXPECT_NE(text.find("ranks 0 and 1 have waited in since"), std::string::npos) << text;
    EXPECT_EQ(text.find("before the inputs end)"), std::string::npos) << text;
    EXPECT_NE(text.find("2 waiting in all_reduce #2\n"), std::string::npos) << text;
    const auto json = nlohmann::json::parse(hang::formatHangJson(stalled));
    EXPECT_TRUE(json["communicators"][0]["hung"]["waited_ns"].is_null());
    EXPECT_EQ(json["communicators"][0]["hung"]["seq"], 2);

    // Rank 0 completed #1, rank 1 has not yet: no one is stuck.
    const hang::HangAnalysis caught = hang::analyzeHang(
        nullptr, dumpsOf("caught", 2,
                         [](int r) { return std::vector<FrEntrySpec>{entry(1, r == 0 ? "completed" : "started")}; }));
    EXPECT_EQ(caught.verdict, hang::Verdict::Healthy);
    const std::string healthy = hang::formatHangText(caught);
    EXPECT_NE(healthy.find("rank 1 of pg 0 (default_pg) has not completed all_reduce #1, which the others completed"),
              std::string::npos)
        << healthy;
    EXPECT_EQ(healthy.find("none completed"), std::string::npos) << healthy;
}

}  // namespace
}  // namespace osc

// PyTorch Flight Recorder dumps: the reader on dumps of every layout we know
// (versions 2.3, 2.4, 2.7, 2.10; each as the JSON PyTorch writes, as the
// pickle its watchdog writes, and as json.dump of that pickle), the real
// dumps of an H200 hang, what it refuses, what it reads with a warning
// (negative or wrapped sequence ids, times no clock gave, broken ranks,
// null entries, a record given twice), and how the input sniffer tells a
// dump from a PyTorch profiler trace and from our own hang JSON.
#include "analyzer/capture/capture_error.h"
#include "analyzer/hang/flight_recorder.h"
#include "analyzer/load/input_kind.h"
#include "analyzer/load/load_capture.h"
#include "tests/analyzer/flight_recorder_fixture.h"
#include "tests/support/temp_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>

namespace osc {
namespace {

using test::FrDumpSpec;
using test::FrEntrySpec;
using test::frJson;
using test::frPickle;
using test::writeText;

using test::frEntry;

enum class Form { Json, Pickle, PickleAsJson };

std::string written(FrDumpSpec d, Form form) {
    if (form == Form::Pickle) return frPickle(d);
    d.pickleConverted = form == Form::PickleAsJson;
    return frJson(d);
}

std::string formName(Form f) { return f == Form::Json ? "json" : f == Form::Pickle ? "pickle" : "pickle_as_json"; }

class FlightRecorderTest : public ::testing::TestWithParam<std::tuple<std::string, Form>> {
protected:
    testsupport::TempDir dir_;
};

TEST_P(FlightRecorderTest, ReadsEveryFieldOfItsVersion) {
    const auto [version, form] = GetParam();
    FrDumpSpec d;
    d.version = version;
    d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}, {"1", {"tp", {2, 3}}}};
    d.entries = {frEntry(1, "completed"), frEntry(2, "started", "_allgather_base", {{512}, {2048}})};
    d.entries[1].pg = "1";
    d.entries[1].desc = "tp";
    d.entries[1].pgId = 1;
    d.entries[1].dtype = "BFloat16";
    d.entries[1].outSizes = std::vector<std::vector<int64_t>>{{4096}};
    d.entries[0].frames = {
        {"all_reduce", "/venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", 3068},
        {"train_step", "/work/train.py", 42},
        {"<module>", "/work/train.py", 99}};
    const std::string path = dir_ / "nccl_trace_rank_3";
    writeText(path, written(d, form));
    EXPECT_EQ(sniff(path), InputKind::FlightRecorderDump);

    const FlightRecorderDump dump = readFlightRecorderDump(path);
    EXPECT_EQ(dump.format,
              form == Form::Pickle ? FlightRecorderDump::Format::Pickle : FlightRecorderDump::Format::Json);
    EXPECT_EQ(dump.version, version);
    EXPECT_EQ(dump.rank, 3);
    const int minor = std::stoi(version.substr(2));
    EXPECT_EQ(dump.commLibVersion, minor >= 10 ? "2.21.5" : minor >= 5 ? "2.20.5" : "");
    ASSERT_EQ(dump.groups.size(), 2u);
    EXPECT_EQ(dump.groups.at("0").ranks, (std::vector<int64_t>{0, 1, 2, 3}));
    EXPECT_TRUE(dump.groups.at("0").ranksKnown);
    EXPECT_EQ(dump.groups.at("1").desc, "tp");
    ASSERT_EQ(dump.entries.size(), 2u);
    const FlightRecorderEntry& a = dump.entries[0];
    EXPECT_EQ(dump.text(a.pgName), "0");
    EXPECT_EQ(dump.text(a.pgDesc), "default_pg");
    EXPECT_EQ(a.collectiveSeqId, 1);
    EXPECT_EQ(dump.text(a.profilingName), "nccl:all_reduce");
    EXPECT_EQ(a.state, FlightRecorderEntry::State::Completed);
    EXPECT_EQ(a.timeCreatedNs, d.entries[0].createdNs);
    EXPECT_EQ(a.timeDiscoveredCompletedNs, d.entries[0].completedNs);
    EXPECT_EQ(a.inputBytes, 4096u);
    // Stack frames are in pickles (and their JSON) only: the program's own line, not PyTorch's.
    const FlightRecorderFrame* frame = dump.frameOf(a);
    if (form == Form::Json) {
        EXPECT_EQ(frame, nullptr);
    } else {
        ASSERT_NE(frame, nullptr);
        EXPECT_EQ(frame->filename, "/work/train.py");
        EXPECT_EQ(frame->line, 42);
        EXPECT_EQ(frame->name, "train_step");
    }
    const FlightRecorderEntry& b = dump.entries[1];
    EXPECT_EQ(dump.text(b.pgName), "1");
    EXPECT_EQ(b.pgId, 1);
    EXPECT_EQ(b.state, FlightRecorderEntry::State::Started);
    EXPECT_EQ(b.timeDiscoveredCompletedNs, kNoFlightRecorderTime);  // 0 or None: not yet
    EXPECT_EQ(dump.text(b.inputShapes), "[[512], [2048]]");
    EXPECT_EQ(dump.text(b.dtypes), "BFloat16");
    EXPECT_EQ(b.inputNumel, 2560u);
    EXPECT_EQ(b.inputBytes, 5120u);
    EXPECT_EQ(b.outputNumel, 4096u);
    EXPECT_EQ(b.outputBytes, 8192u);
    EXPECT_EQ(dump.text(b.threadName), minor >= 10 ? "pt_main_thread" : "");
    EXPECT_EQ(dump.groupStatus.at(1).lastEnqueued, 2);
    EXPECT_EQ(dump.groupStatus.at(1).lastCompleted, -1);
    EXPECT_EQ(dump.groupStatus.at(0).lastCompleted, 1);
    EXPECT_TRUE(dump.warnings.empty()) << dump.warnings.front();
}

INSTANTIATE_TEST_SUITE_P(Versions, FlightRecorderTest,
                         ::testing::Combine(::testing::Values("2.3", "2.4", "2.7", "2.10"),
                                            ::testing::Values(Form::Json, Form::Pickle, Form::PickleAsJson)),
                         [](const auto& param) {
                             std::string v = std::get<0>(param.param);
                             v[1] = '_';
                             return "v" + v + "_" + formName(std::get<1>(param.param));
                         });

// The dumps of the real H200 hang (examples/h200): the JSON ones, and the
// watchdog's pickles as the kit converted them. Counted by hand from the files.
TEST(FlightRecorder, ReadsTheRealH200Dumps) {
    const std::string root = OSC_SOURCE_DIR "/examples/h200/";
    for (const std::string dir :
         {"pytorch_hang_flight_recorder/fr_rank", "pytorch_hang_flight_recorder_watchdog/nccl_trace_rank_"}) {
        const FlightRecorderDump r0 = readFlightRecorderDump(root + dir + "0.json");
        const FlightRecorderDump r1 = readFlightRecorderDump(root + dir + "1.json");
        EXPECT_EQ(r0.version, "2.10");
        EXPECT_EQ(r0.commLibVersion, "2.28.9");
        ASSERT_EQ(r0.entries.size(), 7u);
        ASSERT_EQ(r1.entries.size(), 6u);
        EXPECT_EQ(r0.entries.back().collectiveSeqId, 7);
        EXPECT_EQ(r0.entries.back().state, FlightRecorderEntry::State::Scheduled);
        EXPECT_EQ(r0.entries.back().inputBytes, 4u * 1048576u);
        EXPECT_EQ(r0.groupStatus.at(0).lastEnqueued, 7);
        EXPECT_EQ(r0.groupStatus.at(0).lastCompleted, 6);
        EXPECT_EQ(r0.groupStatus.at(0).lastStarted, -1);
        EXPECT_EQ(r1.groupStatus.at(0).lastEnqueued, 6);
        EXPECT_EQ(r0.groups.at("0").ranks, (std::vector<int64_t>{0, 1}));
        EXPECT_TRUE(r0.warnings.empty());
    }
    const FlightRecorderDump w =
        readFlightRecorderDump(root + "pytorch_hang_flight_recorder_watchdog/nccl_trace_rank_0.json");
    const FlightRecorderFrame* f = w.frameOf(w.entries.back());
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->filename, "/work/main/reference_workloads/pytorch/hang.py");
    EXPECT_EQ(f->line, 86);
}

// A pickle and its JSON, Python's own json.dump(pickle.load(...)) of what
// frPickle writes, read alike: Python is the independent reader here.
TEST(FlightRecorder, PythonReadsOurPickleAsWeDo) {
    testsupport::TempDir dir;
    FrDumpSpec d;
    d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}};
    for (int s = 1; s <= 300; ++s) {  // past 256 memo entries: LONG_BINPUT and LONG_BINGET
        d.entries.push_back(frEntry(s, s < 300 ? "completed" : "started"));
        d.entries.back().frames = {{"f" + std::to_string(s % 7), "/work/x.py", s % 7}};
        d.entries.back().createdNs += (s % 3) * int64_t{1} << 40;  // LONG1 times
    }
    const std::string pkl = dir / "nccl_trace_rank_2";
    writeText(pkl, frPickle(d));
    const std::string json = dir / "nccl_trace_rank_2.json";
    const std::string cmd = std::string(OSC_PYTHON3) +
                            " -c \"import json,pickle,sys; json.dump(pickle.load(open(sys.argv[1],'rb')),"
                            "open(sys.argv[2],'w'))\" " +
                            pkl + " " + json;
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const FlightRecorderDump a = readFlightRecorderDump(pkl), b = readFlightRecorderDump(json);
    ASSERT_EQ(a.entries.size(), 300u);
    ASSERT_EQ(b.entries.size(), 300u);
    for (size_t i = 0; i < 300; ++i) {
        EXPECT_EQ(a.entries[i].collectiveSeqId, b.entries[i].collectiveSeqId);
        EXPECT_EQ(a.entries[i].timeCreatedNs, b.entries[i].timeCreatedNs);
        EXPECT_EQ(a.entries[i].timeCreatedNs, d.entries[i].createdNs);
        EXPECT_EQ(a.entries[i].state, b.entries[i].state);
        EXPECT_EQ(a.frameOf(a.entries[i])->name, b.frameOf(b.entries[i])->name);
        EXPECT_EQ(a.frameOf(a.entries[i])->name, "f" + std::to_string((i + 1) % 7));
    }
    EXPECT_EQ(a.groupStatus.at(0).lastEnqueued, 300);
    EXPECT_EQ(a.groupStatus.at(0).lastCompleted, 299);
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
            const std::string what = e.what();
            EXPECT_NE(what.find(why), std::string::npos) << what;
            EXPECT_NE(what.find(path), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos);
            EXPECT_EQ(what.find("nlohmann"), std::string::npos) << what;
            EXPECT_EQ(what.find("[json.exception"), std::string::npos) << what;
        }
    };
    FrDumpSpec d;
    d.entries = {frEntry(1, "completed")};
    // A pickle that would import and call os.system: refused by name, never run.
    const char evil[] =
        "\x80\x02"
        "cos\nsystem\nq\x00X\x05\x00\x00\x00touch\x85R.";
    refused("nccl_trace_rank_0.pkl", std::string(evil, sizeof evil - 1), "GLOBAL");
    refused("no_rank.json", frJson(d), "cannot tell which rank");
    FrDumpSpec v3 = d;
    v3.version = "3.0";
    refused("dump_1", frJson(v3), "version 3.0");
    refused("dumpp_1", frPickle(v3), "version 3.0");
    refused("dump_2", R"({"version": "2.10", "entries": [{"record_id": 0}]})", "process_group");
    refused("dump_3", R"({"version": "2.10", "entries": [{"record_id": "x", "process_group": ["0", ""]}]})",
            "record_id");
    refused("dump_4", R"({"version": "2.10", "entries": [)", "invalid JSON");
    refused("dump_5", R"([1, 2])", "not a JSON object");
    refused("dump_6",
            R"({"version": "2.10", "entries": [{"record_id": 0, "process_group": ["0", ""], "collective_seq_id": 1,
                "profiling_name": "nccl:all_reduce", "state": "lost"}]})",
            "state");
    refused("dump_7", R"({"pg_config": {}})", "no \"version\"");
    std::string cut = frPickle(d);
    cut.resize(cut.size() / 2);
    refused("dump_8", cut, "cut short");
    refused("dump_9", std::string("\x80\x02]q\x00.", 6), "no dict at its top");
}

// What a dump may hold and still be read: each oddity becomes one warning,
// and no later arithmetic meets a value it cannot hold.
TEST(FlightRecorder, ReadsOddDumpsWithOneWarningEach) {
    testsupport::TempDir dir;
    FrDumpSpec d;
    d.groups = {{"0", {"default_pg", {0, 1}}}, {"1", {"tp", {0, 1}}}, {"2", {"x", {0, 1}}}, {"3", {"y", {0, 1}}}};
    // "3": 19 digits, beyond any rank and beyond int64 once more are read.
    d.ranksText = {{"1", "[0, 1"}, {"2", "[0,,1]"}, {"3", "[0, 1111111111111111111]"}};
    d.entries = {frEntry(1, "completed"), frEntry(-7, "completed"), frEntry(2, "completed"), frEntry(3, "started")};
    d.entries[2].createdNs = std::numeric_limits<int64_t>::min();
    d.entries[3].createdNs = std::numeric_limits<int64_t>::max();
    d.entries[3].recordId = 0;  // the first entry's record id again
    for (const Form form : {Form::Json, Form::Pickle}) {
        const std::string path = dir / ("nccl_trace_rank_1." + formName(form));
        writeText(path, written(d, form));
        const FlightRecorderDump dump = readFlightRecorderDump(path);
        ASSERT_EQ(dump.entries.size(), 2u) << formName(form);  // -7 left out, record 0 read once
        EXPECT_EQ(dump.entries[1].collectiveSeqId, 2);
        EXPECT_EQ(dump.entries[1].timeCreatedNs, kNoFlightRecorderTime);
        EXPECT_FALSE(dump.groups.at("1").ranksKnown);
        EXPECT_FALSE(dump.groups.at("2").ranksKnown);
        EXPECT_FALSE(dump.groups.at("3").ranksKnown);
        std::string all;
        for (const auto& w : dump.warnings) all += w + "\n";
        EXPECT_NE(all.find("\"ranks\" is not a list of ranks"), std::string::npos) << all;
        EXPECT_NE(all.find("1 entry has a negative, null or wrapped sequence id"), std::string::npos) << all;
        EXPECT_NE(all.find("-7"), std::string::npos) << all;
        EXPECT_NE(all.find("repeats an earlier entry's record_id"), std::string::npos) << all;
        EXPECT_NE(all.find("-9223372036854775808"), std::string::npos) << all;
        EXPECT_EQ(all.find("18446744073709551609"), std::string::npos) << all;
    }
    // A wrapped id (2^64 - 7, as a size_t of -7 prints) and entries: null.
    const std::string wrapped = dir / "nccl_trace_rank_5";
    writeText(wrapped,
              R"({"version": "2.10", "entries": [{"record_id": 0, "process_group": ["0", ""], "collective_seq_id":
                  18446744073709551609, "profiling_name": "nccl:all_reduce", "state": "started"}]})");
    FlightRecorderDump w = readFlightRecorderDump(wrapped);
    EXPECT_TRUE(w.entries.empty());
    ASSERT_EQ(w.warnings.size(), 1u);
    EXPECT_NE(w.warnings[0].find("beyond 64 bits"), std::string::npos) << w.warnings[0];
    writeText(wrapped, R"({"version": "2.10", "entries": null})");
    w = readFlightRecorderDump(wrapped);
    ASSERT_EQ(w.warnings.size(), 1u);
    EXPECT_NE(w.warnings[0].find("null"), std::string::npos);
}

TEST(FlightRecorder, TheSnifferTellsDumpsFromProfilerTracesAndHangResults) {
    testsupport::TempDir dir;
    const auto kind = [&](const std::string& name, const std::string& text) {
        writeText(dir / name, text);
        return sniff(dir / name);
    };
    FrDumpSpec d;
    d.entries = {frEntry(1, "completed")};
    EXPECT_EQ(kind("a_0", frJson(d)), InputKind::FlightRecorderDump);
    EXPECT_EQ(kind("p_0", frPickle(d)), InputKind::FlightRecorderDump);
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
    // Our own verdict is neither, and says so.
    EXPECT_EQ(kind("h.json", "{\n  \"format\": \"overlapscope-hang\",\n  \"version\": 1\n}"), InputKind::HangResult);
    try {
        loadCapture(dir / "h.json");
        ADD_FAILURE();
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("an overlapscope hang result"), std::string::npos) << e.what();
    }
    // A directory of PyTorch's default names (no extension) is one of dumps.
    std::filesystem::create_directory(dir / "dumps");
    writeText(dir / "dumps/nccl_trace_rank_0", frJson(d));
    writeText(dir / "dumps/nccl_trace_rank_1", frPickle(d));
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

}  // namespace
}  // namespace osc

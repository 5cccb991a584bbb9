// `overlapscope hang` end to end: exit codes (0 healthy, 1 hang or desync,
// 2 bad input), the verdict's facts and length, --verbose, the JSON's
// fields, output files, Flight Recorder dumps (pickles and JSON) and
// directories of them, captures of the job synthesised with a stalled or
// desynced rank, the real H200 hang's capture and dumps together, its own
// JSON given back, and a capture `report` refuses.
#include "cli_fixture.h"
#include "tests/analyzer/flight_recorder_fixture.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

class CliHang : public Cli {
protected:
    // Four ranks, two all-reduces per step (6 layers of 8 MiB in 25 MiB buckets).
    std::string synth(const std::string& name, const std::string& options) {
        const auto dir = path(name);
        const auto r = run("synth --ranks 4 --layers 6 --steps 4 " + options + " -o " + quote(dir));
        EXPECT_EQ(r.code, 0) << r.err;
        return dir;
    }
};

TEST_F(CliHang, HangHasHelp) {
    const auto r = run("hang --help");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("--min-wait-ms"), std::string::npos);
    EXPECT_NE(r.out.find("Flight Recorder"), std::string::npos);
}

TEST_F(CliHang, HangOnAStalledJobNamesTheRankExitOne) {
    const auto dir = synth("stall", "--stall-rank 2 --stall-at-step 2");
    auto r = run("hang " + quote(dir));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("HANG: rank 2 never entered AllReduce #4 of 0x5e1f0c0ffee15eed, which ranks 0, 1 and 3 "
                         "have waited in"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("its last CUDA call was cudaLaunchKernel_v7000"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rank 2 (synth-host:4002): last completed AllReduce #3 of 0x5e1f0c0ffee15eed"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("<- stuck"), std::string::npos) << r.out;  // the tables are --verbose's
    EXPECT_LE(lineCount(r.out), 15u) << r.out;
    r = run("hang --verbose " + quote(dir));
    EXPECT_NE(r.out.find("rank 2 (synth-host:4002): last entered AllReduce #3, last completed AllReduce #3  <- stuck"),
              std::string::npos)
        << r.out;

    r = run("hang --format json " + quote(dir));
    EXPECT_EQ(r.code, 1) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["format"], "overlapscope-hang");
    EXPECT_EQ(j["version"], 1);
    EXPECT_EQ(j["verdict"], "hang");
    EXPECT_EQ(j["first_missing"]["communicator"], "0x5e1f0c0ffee15eed");
    EXPECT_EQ(j["first_missing"]["seq"], 4);
    EXPECT_EQ(j["first_missing"]["collective"], "AllReduce");
    ASSERT_EQ(j["stuck_ranks"].size(), 1u);
    EXPECT_EQ(j["stuck_ranks"][0]["rank"], 2);
    EXPECT_EQ(j["stuck_ranks"][0]["last_completed"]["seq"], 3);
    EXPECT_EQ(j["stuck_ranks"][0]["host"]["last_api_call"]["name"], "cudaLaunchKernel_v7000");
    EXPECT_TRUE(j["desyncs"].empty());
    EXPECT_EQ(j["communicators"][0]["hung"]["waiting_ranks"], nlohmann::json::parse("[0, 1, 3]"));
    EXPECT_GE(j["communicators"][0]["hung"]["waited_ns"].get<int64_t>(), 5'000'000'000);

    // Waited on for less than --min-wait-ms: in flight, not hung.
    r = run("hang --min-wait-ms 60000 " + quote(dir));
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.err.find("in flight"), std::string::npos) << r.err;
}

TEST_F(CliHang, HangOnADesyncExitOneAndAHealthyJobExitZero) {
    auto r = run("hang " + quote(synth("desync", "--desync-rank 1 --desync-at-step 1")));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("DESYNC: AllReduce #2 of 0x5e1f0c0ffee15eed: different sizes: ranks 0, 2 and 3 with 32.0 "
                         "MiB and rank 1 with 64.0 MiB."),
              std::string::npos)
        << r.out;
    r = run("hang " + quote(synth("healthy", "")));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("overlapscope hang: 1 communicator from 1 input\nHEALTHY", 0), 0u) << r.out;
}

TEST_F(CliHang, HangReadsADirectoryOfFlightRecorderDumps) {
    const auto dir = path("fr");
    std::filesystem::create_directory(dir);
    for (int rank = 0; rank < 2; ++rank) {
        // Rank 1 never entered collective 2 of the default group.
        std::string entries = R"({"record_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"],
            "collective_seq_id": 1, "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce",
            "time_created_ns": 1760000000000000000, "input_sizes": [[1024]], "input_dtypes": ["Float"],
            "output_sizes": [[1024]], "output_dtypes": ["Float"], "state": "completed",
            "time_discovered_started_ns": 1760000000000100000, "time_discovered_completed_ns": 1760000000000200000,
            "retired": true, "timeout_ms": 600000, "is_p2p": false})";
        if (rank == 0)
            entries += R"(, {"record_id": 1, "pg_id": 0, "process_group": ["0", "default_pg"],
            "collective_seq_id": 2, "p2p_seq_id": 0, "op_id": 2, "profiling_name": "nccl:all_reduce",
            "time_created_ns": 1760000001000000000, "input_sizes": [[1024]], "input_dtypes": ["Float"],
            "output_sizes": [[1024]], "output_dtypes": ["Float"], "state": "started",
            "time_discovered_started_ns": 1760000001000100000, "time_discovered_completed_ns": 0,
            "retired": false, "timeout_ms": 600000, "is_p2p": false})";
        std::ofstream(dir + "/nccl_trace_rank_" + std::to_string(rank))
            << R"({"comm_lib_version": "2.21.5", "entries": [)" << entries
            << R"(], "pg_config": {"0": {"desc": "default_pg", "name": "0", "ranks": "[0, 1]"}},
               "pg_status": {}, "version": "2.10"})";
    }
    const auto r = run("hang " + quote(dir));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("HANG: rank 1 never entered all_reduce #2 of pg 0 (default_pg)"), std::string::npos) << r.out;
}

// The pickles PyTorch's watchdog writes, read as they are; a directory
// mixing them with JSON dumps is one job.
TEST_F(CliHang, HangReadsPickledDumpsAsPyTorchWritesThem) {
    const auto dir = path("pickles");
    std::filesystem::create_directory(dir);
    for (int rank = 0; rank < 4; ++rank) {
        osc::test::FrDumpSpec d;
        d.groups = {{"0", {"default_pg", {0, 1, 2, 3}}}};
        for (int s = 1; s <= 9; ++s) {
            osc::test::FrEntrySpec e;
            e.seq = s;
            e.createdNs = 1'760'000'000'000'000'000 + s * 1'000'000;
            e.completedNs = e.createdNs + 1000;
            e.frames = {{"train_step", "/work/train.py", 40 + s}};
            d.entries.push_back(e);
        }
        if (rank != 2) {
            osc::test::FrEntrySpec e = d.entries.back();
            e.seq = 10;
            e.frames = {{"train_step", "/work/train.py", 50}};
            e.state = "started";
            e.completedNs = 0;
            e.createdNs += 1'000'000;
            d.entries.push_back(e);
        }
        osc::test::writeText(dir + "/nccl_trace_rank_" + std::to_string(rank),
                             rank == 3 ? osc::test::frJson(d) : osc::test::frPickle(d));
    }
    const auto r = run("hang " + quote(dir));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("HANG: rank 2 never entered all_reduce #10 of pg 0 (default_pg), which ranks 0, 1 and 3 have "
                         "waited in"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("rank 2: last completed #9 of pg 0 (default_pg) by its pg_status"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("called from train.py:49 (train_step)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("waiting: ranks 0 and 1 called it from train.py:50 (train_step)."), std::string::npos)
        << r.out;  // rank 3's JSON dump holds no stack frames
}

// The real H200 hang: our capture and the watchdog's dumps together are one
// verdict, the capture telling what each GPU did with the dumps' calls.
TEST_F(CliHang, TheRealHangCaptureAndDumpsTogether) {
    const std::string h200 = OSC_SOURCE_DIR "/examples/h200/";
    // Copied: reading a WAL-mode capture must not need to write beside it.
    std::filesystem::copy(h200 + "pytorch_hang", path("caps"));
    const auto r = run("hang " + quote(path("caps")) + " " + quote(h200 + "pytorch_hang_flight_recorder_watchdog"));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("HANG: rank 1 never entered all_reduce #7 of pg 0 (default_pg), which rank 0 has waited in"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("the kernel of its AllReduce #5 finished"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rank 0 called it from hang.py:86 (main) and its kernel has run since"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("0x508d0e5b0ce4e0bd"), std::string::npos) << r.out;  // joined: no second verdict
    const auto j = nlohmann::json::parse(
        run("hang --format json " + quote(path("caps")) + " " + quote(h200 + "pytorch_hang_flight_recorder_watchdog"))
            .out);
    ASSERT_EQ(j["communicators"].size(), 2u);
    EXPECT_EQ(j["communicators"][0]["joined_to"], "pg 0 (default_pg)");
    EXPECT_EQ(j["communicators"][1]["ranks"][0]["gpu"]["state"], "running");
    EXPECT_EQ(j["stuck_ranks"][0]["gpu"]["state"], "finished");
}

// Its own JSON given to any command says what it is; so does a dump's
// broken JSON, without the JSON library's words.
TEST_F(CliHang, ItsOwnJsonAndBrokenDumpsSayWhatTheyAre) {
    const auto f = bucketed(1);
    const auto out = path("hang.json");
    ASSERT_EQ(run("hang --format json -o " + quote(out) + " " + quote(f)).code, 0);
    for (const std::string& command : std::vector<std::string>{"report", "export -o " + quote(path("x.json")), "hang",
                                                               "check --min-overlap-ratio 0.5"}) {
        const auto r = run(command + " " + quote(out));
        EXPECT_EQ(r.code, 2) << command;
        EXPECT_NE(r.err.find("an overlapscope hang result"), std::string::npos) << command << ": " << r.err;
        EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    }
    const auto dump = path("nccl_trace_rank_0");
    std::ofstream(dump) << R"({"version": "2.10", "entries": [{"record_id": 0,, }]})";
    const auto r = run("hang " + quote(dump));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("line 1: invalid JSON"), std::string::npos) << r.err;
    for (const char* internal : {"json.exception", "nlohmann", "parse_error", "syntax error while"})
        EXPECT_EQ(r.err.find(internal), std::string::npos) << r.err;
}

// A capture `report` refuses (a kernel's grid column holding text, as a
// tool editing an export might leave it) is refused by `hang` too, not read
// in part and called healthy.
TEST_F(CliHang, ACaptureReportRefusesHangRefusesToo) {
    const auto f = path("damaged.sqlite");
    std::filesystem::copy_file(OSC_SOURCE_DIR "/examples/ddp_bucketed.sqlite", f);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(f.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'abc' WHERE rowid = "
                           "(SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    const auto report = run("report " + quote(f));
    const auto hang = run("hang " + quote(f));
    EXPECT_EQ(report.code, 2);
    EXPECT_EQ(hang.code, 2) << hang.out;
    EXPECT_EQ(hang.err, report.err);
}

TEST_F(CliHang, HangRefusesBadInputInOneLineExitTwo) {
    const auto junk = path("junk.json");
    std::ofstream(junk) << "{\"version\": \"2.10\", \"entries\": [";
    for (const std::string& input : {path("missing"), junk}) {
        const auto r = run("hang " + quote(input));
        EXPECT_EQ(r.code, 2) << input;
        EXPECT_EQ(lineCount(r.err), 1u) << r.err;
        EXPECT_NE(r.err.find(input), std::string::npos) << r.err;
    }
    // A partial result holds no order of collectives.
    const auto f = bucketed(1);
    const auto part = path("p.partial.json");
    ASSERT_EQ(run("report --partial -o " + quote(part) + " " + quote(f)).code, 0);
    auto r = run("hang " + quote(part));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("partial results"), std::string::npos) << r.err;
    EXPECT_EQ(run("hang --format yaml " + quote(f)).code, 2);
    EXPECT_EQ(run("hang --min-wait-ms -1 " + quote(f)).code, 2);
}

TEST_F(CliHang, HangWritesAFileOnlyWithForceToReplace) {
    const auto f = bucketed(1);
    const auto out = path("hang.json");
    EXPECT_EQ(run("hang --format json -o " + quote(out) + " " + quote(f)).code, 0);
    EXPECT_EQ(nlohmann::json::parse(slurp(out))["verdict"], "healthy");
    std::ofstream(out) << "keep";
    auto r = run("hang -o " + quote(out) + " " + quote(f));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(slurp(out), "keep");
    EXPECT_EQ(run("hang --force -o " + quote(out) + " " + quote(f)).code, 0);
    EXPECT_NE(slurp(out), "keep");
}

// synth's hang options refuse what has no known answer, in one line, exit 2,
// and write nothing.
TEST_F(CliHang, SynthRefusesAStallOrDesyncItCannotMake) {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"--stall-rank 4 --stall-at-step 1", "--stall-rank must be a rank"},  // 4 ranks: 0-3
        {"--stall-rank 1 --stall-at-step 4", "--stall-rank must be a rank"},  // 4 steps: 0-3
        {"--stall-rank 1", "go together"},
        {"--desync-rank 1", "go together"},
        {"--desync-rank 1 --desync-at-step -1", "--desync-rank"},
    };
    int n = 0;
    for (const auto& [options, says] : bad) {
        const auto out = path("bad" + std::to_string(n++));
        const auto r = run("synth --ranks 4 --layers 6 --steps 4 " + options + " -o " + quote(out));
        EXPECT_EQ(r.code, 2) << options;
        EXPECT_EQ(lineCount(r.err), 1u) << r.err;
        EXPECT_NE(r.err.find(says), std::string::npos) << options << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(out)) << options;
    }
    const auto r = run("synth --workload pipeline --stall-rank 1 --stall-at-step 1 -o " + quote(path("pp")));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("data-parallel"), std::string::npos) << r.err;
}

// `overlapscope hang` end to end: exit codes (0 healthy, 1 hang or desync,
// 2 bad input), the paragraph's facts, the JSON's fields, output files,
// Flight Recorder dumps and directories of them, and captures of the job
// synthesised with a stalled or desynced rank.
#include "cli_fixture.h"

#include <gtest/gtest.h>
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
    EXPECT_NE(r.out.find("HANG: rank 2 never entered AllReduce #4 of communicator 0x5e1f0c0ffee15eed, which "
                         "ranks 0, 1 and 3 have waited in"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("its last CUDA call was cudaLaunchKernel_v7000"), std::string::npos) << r.out;
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
    EXPECT_NE(r.out.find("DESYNC: the ranks called AllReduce #2 of communicator 0x5e1f0c0ffee15eed with different "
                         "sizes: ranks 0, 2 and 3 with 32.0 MiB, rank 1 with 64.0 MiB"),
              std::string::npos)
        << r.out;
    r = run("hang " + quote(synth("healthy", "")));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("overlapscope hang: 1 communicator from 1 input\n\nHEALTHY", 0), 0u) << r.out;
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
    EXPECT_NE(r.out.find("HANG: rank 1 never entered all_reduce #2 of communicator pg 0 (default_pg)"),
              std::string::npos)
        << r.out;
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

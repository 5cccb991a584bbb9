// The NCCL plugin's sends and receives end to end, without a GPU: the real
// `overlapscope run` injects the fake agent library into fake_job, which
// plays NCCL on the library's exported ncclProfiler_v5 / _v4 (fake_nccl.h)
// while the fake agent's GPU runs the launches' SendRecv kernels. The rows
// are read back from the SQLite file as written, and `overlapscope report`
// must pair every send with its receive across two ranks.
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

namespace osc::agent {
namespace {

using test::Child;
using test::TempDir;

// fake_job's ring exchange (fake_job.cpp): rank r sends its successor
// 512 (r + 1) + 8 i bf16 elements in launch i, one channel each; launch i's
// kernel runs 7 us, 1 ms after launch i - 1, and NCCL reads the GPU timer
// 770 us ahead of the kernels' clock.
uint64_t ringBytes(int from, int launch) {
    return 2 * (512u * static_cast<uint64_t>(from + 1) + 8u * static_cast<uint64_t>(launch));
}
constexpr int64_t kKernelNs = 7000, kPeriodNs = 1000000, kGpuTimerAheadNs = 770000;

class P2pEndToEnd : public ::testing::Test {
protected:
    // `overlapscope run -o out -- fake_job 0.3 0 ARGS...` as rank `rank`.
    std::unique_ptr<Child> run(const std::string& out, const std::vector<std::string>& job, int rank, int worldSize,
                               const std::vector<std::string>& runArgs = {},
                               const std::map<std::string, std::string>& extraEnv = {}) {
        std::vector<std::string> argv = {OSC_TEST_CLI, "run", "--agent", OSC_TEST_FAKE_AGENT, "-o", out};
        argv.insert(argv.end(), runArgs.begin(), runArgs.end());
        argv.insert(argv.end(), {"--", OSC_TEST_FAKE_JOB, "0.3", "0"});
        argv.insert(argv.end(), job.begin(), job.end());
        std::map<std::string, std::string> env = {
            {"OVERLAPSCOPE_SOCKET_DIR", dir / "sock"},
            {"OVERLAPSCOPE_COMMIT_MS", "100"},
            {"OVERLAPSCOPE_FAKE_RATE", "400"},  // a few of the fake loop's kernels beside the SendRecv ones
            {"CUDA_INJECTION64_PATH", ""},
            {"OVERLAPSCOPE_AGENT", ""},
            {"RANK", std::to_string(rank)},
            {"LOCAL_RANK", std::to_string(rank)},
            {"WORLD_SIZE", std::to_string(worldSize)},
            {"NCCL_PROFILER_PLUGIN", ""},
            {"OVERLAPSCOPE_NCCL_PLUGIN_CHAIN", ""}};
        for (const auto& [k, v] : extraEnv) env[k] = v;
        return std::make_unique<Child>(argv, env, dir / ("run" + std::to_string(++runs) + ".log"));
    }

    TempDir dir;
    int runs = 0;
};

// One OVERLAPSCOPE_NCCL_COLL row as the file holds it; text NULL as "NULL".
struct Row {
    int64_t commHash, rank, nranks, seqNumber, count, bytes, root, nChannels, gpuStart, gpuEnd;
    std::string func, datatype, algo, proto;
};

std::vector<Row> pluginRows(const std::string& path) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
    sqlite3_stmt* st = nullptr;
    const char* sql =
        "SELECT commHash, rank, nranks, seqNumber, count, bytes, root, nChannels, gpuStart, gpuEnd, "
        "func, datatype, algo, proto FROM OVERLAPSCOPE_NCCL_COLL ORDER BY func, seqNumber";
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::vector<Row> rows;
    const auto text = [&](int col) {
        const auto* t = sqlite3_column_text(st, col);
        return t ? std::string(reinterpret_cast<const char*>(t)) : std::string("NULL");
    };
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        Row r{};
        int64_t* ints[] = {&r.commHash, &r.rank, &r.nranks,    &r.seqNumber, &r.count,
                           &r.bytes,    &r.root, &r.nChannels, &r.gpuStart,  &r.gpuEnd};
        for (int c = 0; c < 10; ++c) *ints[c] = sqlite3_column_int64(st, c);
        r.func = text(10), r.datatype = text(11), r.algo = text(12), r.proto = text(13);
        rows.push_back(r);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rows;
}

TEST_F(P2pEndToEnd, RowsInTheFileUnderBothExportedTables) {
    // Rank 2 of 4: three launches, each a send to rank 3 and a receive from rank 1.
    for (const std::string abi : {"4", "5"}) {
        const std::string out = dir / ("out" + abi);
        auto r = run(out, {"--p2p", "3", "--nccl-abi", abi}, 2, 4);
        ASSERT_EQ(r->waitExitCode(), 0) << r->output();
        const auto files = test::filesIn(out);
        ASSERT_EQ(files.size(), 1u) << "ABI " << abi;
        const std::vector<Row> rows = pluginRows(files[0]);
        ASSERT_EQ(rows.size(), 6u) << "ABI " << abi;
        for (size_t k = 0; k < rows.size(); ++k) {
            const Row& row = rows[k];
            const bool send = k >= 3;  // Recv sorts first
            const int i = static_cast<int>(k % 3);
            SCOPED_TRACE("ABI " + abi + ", row " + std::to_string(k));
            EXPECT_EQ(row.func, send ? "Send" : "Recv");
            EXPECT_EQ(row.seqNumber, i);  // per peer and direction, from 0
            EXPECT_EQ(row.commHash, 0xC0FFEE);
            EXPECT_EQ(row.rank, 2);
            EXPECT_EQ(row.nranks, 4);
            EXPECT_EQ(row.root, send ? 3 : 1);  // the peer
            EXPECT_EQ(static_cast<uint64_t>(row.bytes), ringBytes(send ? 2 : 1, i));
            EXPECT_EQ(static_cast<uint64_t>(row.count), ringBytes(send ? 2 : 1, i) / 2);
            EXPECT_EQ(row.datatype, "ncclBfloat16");
            EXPECT_EQ(row.algo, "NULL");
            EXPECT_EQ(row.proto, "NULL");
            EXPECT_EQ(row.nChannels, 1);
            EXPECT_EQ(row.gpuEnd - row.gpuStart, send ? kKernelNs : kKernelNs - 20);
            // Launch i's kernel is i ms after launch 0's; the receive's channel starts 10 ns after the send's.
            EXPECT_EQ(row.gpuStart - rows[send ? 3 : 0].gpuStart, i * kPeriodNs);
        }
        EXPECT_EQ(rows[0].gpuStart - rows[3].gpuStart, 10) << "ABI " << abi;
    }
}

void exec(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
}

// Two ranks, four launches each: rank 0 sends to 1 and receives from 1, and
// so does rank 1 the other way: eight transfers. With `lateLaunches`, rank
// 1's capture is cut as if it had begun only after that many launches (its
// kernels and rows before then deleted; the plugin's numbers, counted since
// the communicator was made, stay as written): the first launches' sends
// and receives on rank 0 then have no partner, and the rest still pair
// launch i with launch i.
void expectPairs(TempDir& dir, const std::vector<std::string>& files, int launches, int lateLaunches);

TEST_F(P2pEndToEnd, ReportPairsEverySendWithItsReceive) {
    constexpr int kLaunches = 4;
    const std::string out = dir / "out";
    std::vector<std::unique_ptr<Child>> ranks;
    for (int r = 0; r < 2; ++r)
        ranks.push_back(
            run(out, {"--p2p", std::to_string(kLaunches), "--rank", std::to_string(r), "--nranks", "2"}, r, 2));
    for (auto& r : ranks) ASSERT_EQ(r->waitExitCode(), 0) << r->output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 2u);
    expectPairs(dir, files, kLaunches, 0);

    // The same files, rank 1's capture begun between launches 0 and 1.
    std::string rank1;
    for (const auto& f : files)
        if (pluginRows(f).at(0).rank == 1) rank1 = f;
    ASSERT_FALSE(rank1.empty());
    int64_t firstRow = INT64_MAX;
    for (const auto& row : pluginRows(rank1)) firstRow = std::min(firstRow, row.gpuStart);
    const int64_t begin = firstRow - kGpuTimerAheadNs + kPeriodNs / 2;  // on the kernels' clock
    exec(rank1, "DELETE FROM OVERLAPSCOPE_KERNEL WHERE start < " + std::to_string(begin) +
                    "; DELETE FROM OVERLAPSCOPE_NCCL_COLL WHERE gpuStart < " +
                    std::to_string(begin + kGpuTimerAheadNs));
    ASSERT_EQ(pluginRows(rank1).size(), 2u * (kLaunches - 1));
    expectPairs(dir, files, kLaunches, 1);
}

void expectPairs(TempDir& dir, const std::vector<std::string>& files, int kLaunches, int lateLaunches) {
    SCOPED_TRACE("rank 1 from launch " + std::to_string(lateLaunches));

    const std::string reportPath = dir / ("report" + std::to_string(lateLaunches) + ".json");
    std::vector<std::string> argv = {OSC_TEST_CLI, "report", "--format", "json", "-o", reportPath};
    argv.insert(argv.end(), files.begin(), files.end());
    Child report(argv, {}, dir / ("report" + std::to_string(lateLaunches) + ".log"));
    ASSERT_EQ(report.waitExitCode(60), 0) << report.output();
    std::ifstream in(reportPath);
    const nlohmann::json doc = nlohmann::json::parse(in);

    const auto& devices = doc.at("devices");
    ASSERT_EQ(devices.size(), 2u);
    // Per device, its SendRecv kernels in start order: launch i is the i-th.
    std::map<std::pair<size_t, size_t>, int> launchOf;  // (device index, collective index) -> launch
    for (size_t d = 0; d < devices.size(); ++d) {
        std::vector<std::pair<int64_t, size_t>> byStart;
        const auto& colls = devices[d].at("collectives");
        for (size_t c = 0; c < colls.size(); ++c)
            if (colls[c].at("collective") == "SendRecv") byStart.push_back({colls[c].at("start_ns").get<int64_t>(), c});
        const int rank = devices[d].at("rank").get<int>();
        const int first = rank == 1 ? lateLaunches : 0;
        ASSERT_EQ(byStart.size(), static_cast<size_t>(kLaunches - first)) << "device " << d;
        std::sort(byStart.begin(), byStart.end());
        for (int i = first; i < kLaunches; ++i) {
            const auto& k = colls[byStart[static_cast<size_t>(i - first)].second];
            launchOf[{d, byStart[static_cast<size_t>(i - first)].second}] = i;
            EXPECT_EQ(k.at("duration_ns").get<int64_t>(), kKernelNs);
            // The kernel carries its send and its receive: both rows landed on it.
            EXPECT_EQ(k.at("bytes").get<uint64_t>(), ringBytes(rank, i) + ringBytes(1 - rank, i)) << rank << ' ' << i;
        }
    }
    // (sender rank, receiver rank, launch on the sender, launch on the receiver, bytes)
    std::multiset<std::tuple<int, int, int, int, uint64_t>> got, want;
    for (const auto& t : doc.at("p2p_transfers")) {
        const size_t s = t.at("sender").at("device"), sc = t.at("sender").at("collective");
        const size_t r = t.at("receiver").at("device"), rc = t.at("receiver").at("collective");
        EXPECT_EQ(t.at("comm_hash"), "0x0000000000c0ffee");
        got.insert({devices.at(s).at("rank").get<int>(), devices.at(r).at("rank").get<int>(), launchOf.at({s, sc}),
                    launchOf.at({r, rc}), t.at("bytes").get<uint64_t>()});
    }
    for (int i = lateLaunches; i < kLaunches; ++i)
        for (int from = 0; from < 2; ++from) want.insert({from, 1 - from, i, i, ringBytes(from, i)});
    EXPECT_EQ(got, want);
    bool warned = false;
    for (const auto& w : doc.at("warnings")) {
        EXPECT_EQ(w.get<std::string>().find("unmatched"), std::string::npos) << w;
        warned |= w.get<std::string>().find(std::to_string(2 * lateLaunches) +
                                            " send(s)/receive(s) found no partner") != std::string::npos;
    }
    EXPECT_EQ(warned, lateLaunches > 0);
}

std::string metaValue(const std::string& path, const std::string& key) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
    sqlite3_stmt* st = nullptr;
    std::string value = "(absent)";
    if (sqlite3_prepare_v2(db, "SELECT value FROM OVERLAPSCOPE_META WHERE name = ?", -1, &st, nullptr) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW) value = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return value;
}

// Issue 47: the H200 mesh's SIGSEGV, played on the agent library as NCCL
// 2.28.9's preempted proxy thread plays it (fake_job --nccl-stale). Every
// call naming a dead handle is refused and counted in the capture's meta;
// every all-reduce still has its row, and the orphaned channels (started,
// never stopped) end their rows once later kernels have run.
TEST_F(P2pEndToEnd, StaleKernelChStopsAreCountedNotFollowed) {
    constexpr int kLaunches = 50;  // 25 of them (1, 3, ..., 49) out of order
    const std::string out = dir / "out";
    auto r = run(out, {"--nccl-stale", std::to_string(kLaunches)}, 0, 1);
    ASSERT_EQ(r->waitExitCode(), 0) << r->output();
    const auto files = test::filesIn(out);
    ASSERT_EQ(files.size(), 1u);
    const std::vector<Row> rows = pluginRows(files[0]);
    ASSERT_EQ(rows.size(), static_cast<size_t>(kLaunches));
    for (int i = 0; i < kLaunches; ++i) EXPECT_EQ(rows[static_cast<size_t>(i)].seqNumber, 1000 + i);
    EXPECT_EQ(metaValue(files[0], "ignored_nccl_stale_handle"), std::to_string(2 * kLaunches / 2));
    // Launch i's orphan ends once launch i + 3 (the next one in order after
    // i + 1) has run: all but those of launches 47 and 49, which finalize writes.
    EXPECT_EQ(metaValue(files[0], "ignored_nccl_orphan_channel"), "23");
    for (const char* zero : {"ignored_nccl_foreign_handle", "ignored_nccl_unknown_handle", "ignored_nccl_stopped_twice",
                             "ignored_buffer_foreign", "ignored_source_stop_gave_up"})
        EXPECT_EQ(metaValue(files[0], zero), "0") << zero;
}

#ifdef OSC_TEST_REAL_AGENT
// The same on the real CUPTI agent library, loaded as the CUDA driver and
// NCCL load it, on a machine without a GPU: it died of SIGSEGV in
// pthread_mutex_lock before issue 47.
TEST_F(P2pEndToEnd, RealAgentSurvivesStaleKernelChStops) {
    const std::map<std::string, std::string> env = {{"CUDA_INJECTION64_PATH", OSC_TEST_REAL_AGENT},
                                                    {"OVERLAPSCOPE_OUTPUT_DIR", dir.path()},
                                                    {"OVERLAPSCOPE_CONTROL", "0"}};
    Child job({OSC_TEST_FAKE_JOB, "0", "7", "--nccl-stale", "400"}, env, dir / "real.log");
    EXPECT_EQ(job.waitExitCode(), 7) << job.output();
}
#endif

// Issue 41, "beside other NCCL tools": a job that names its own NCCL
// profiler plugin keeps it. `overlapscope run` chains it behind ours
// (NCCL_PROFILER_PLUGIN set before us, or --nccl-plugin-chain); the stub
// plugin, which follows every handle it is given, sees every event of the
// job with its own handles while our rows are as they always were.
TEST_F(P2pEndToEnd, TheJobsOwnProfilerPluginIsChainedBehindOurs) {
    const std::string stubLog = dir / "stub.log";
    for (const bool byOption : {false, true}) {
        SCOPED_TRACE(byOption ? "--nccl-plugin-chain" : "NCCL_PROFILER_PLUGIN");
        std::filesystem::remove(stubLog);
        const std::string out = dir / (byOption ? "out-option" : "out-env");
        std::map<std::string, std::string> env = {{"STUB_PROFILER_LOG", stubLog}};
        std::vector<std::string> runArgs;
        if (byOption)
            runArgs = {"--nccl-plugin-chain", OSC_TEST_STUB_PLUGIN};
        else
            env["NCCL_PROFILER_PLUGIN"] = OSC_TEST_STUB_PLUGIN;
        auto r = run(out, {"--p2p", "3", "--nccl", "2"}, 2, 4, runArgs, env);
        ASSERT_EQ(r->waitExitCode(), 0) << r->output();
        if (!byOption) {
            EXPECT_NE(r->output().find("is chained behind"), std::string::npos) << r->output();
        }
        const auto files = test::filesIn(out);
        ASSERT_EQ(files.size(), 1u);
        const std::vector<Row> rows = pluginRows(files[0]);
        ASSERT_EQ(rows.size(), 8u);  // 2 all-reduces, 3 sends, 3 receives
        for (const Row& row : rows) EXPECT_GT(row.gpuEnd, row.gpuStart) << row.func << ' ' << row.seqNumber;
        std::ifstream in(stubLog);
        std::string line;
        ASSERT_TRUE(std::getline(in, line)) << "the chained plugin was never finalized";
        // fake_job: 2 all-reduces of 2 channels (each after its own API
        // call), 3 launches of a send and a receive of 1 channel each.
        for (const char* want : {"coll=2 ", "p2p=6 ", "kernelch=10 ", "collapi=2 ", "group=5 ", "records=10 ",
                                 "bad_handles=0 ", "bad_parents=0 ", "double_stops=0 ", "unstopped=0"})
            EXPECT_NE(line.find(want), std::string::npos) << want << " in " << line;
    }
}

TEST_F(P2pEndToEnd, ChainOptionRefusesWhatCannotWork) {
    const auto fails = [&](const std::vector<std::string>& runArgs, const std::string& says) {
        auto r = run(dir / "never", {}, 0, 1, runArgs);
        EXPECT_EQ(r->waitExitCode(), 2) << r->output();
        const std::string text = r->output();
        EXPECT_NE(text.find(says), std::string::npos) << text;
        EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    };
    fails({"--nccl-plugin-chain", dir / "missing.so"}, "missing.so: no such file");
    fails({"--nccl-plugin-chain", OSC_TEST_STUB_PLUGIN, "--no-nccl-plugin"}, "--no-nccl-plugin");
    fails({"--nccl-plugin-chain", ""}, "empty");
}

}  // namespace
}  // namespace osc::agent

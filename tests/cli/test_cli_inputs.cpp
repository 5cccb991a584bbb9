// Issue 14 items 4-6, end to end: hostile or unlucky inputs end in one line
// naming the file, exit 2; no crash, no hang, no wrong answer printed.
#include "cli_fixture.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <tuple>

namespace {

// A Kineto trace with one kernel at the given start (microseconds, as text).
std::string kinetoWithKernelsAt(const std::string& ts1, const std::string& ts2) {
    return R"J({"traceEvents":[
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":)J" +
           ts1 +
           R"J(,"dur":1.5,"args":{"device":0,"stream":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)","pid":0,"tid":8,"ts":)J" +
           ts2 + R"J(,"dur":1.5,"args":{"device":0,"stream":8,"correlation":2}}]})J";
}

// Runs SQL on a capture file (to make it hostile).
void sql(const std::string& file, const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << statement << ": " << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
}

void expectOneLineNaming(const CliResult& r, const std::string& file, const std::string& what,
                         const std::string& args) {
    EXPECT_EQ(r.code, 2) << args << ": " << r.out << r.err;
    EXPECT_EQ(lineCount(r.err), 1u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(file), std::string::npos) << args << ": " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << args << ": " << r.err;
}

}  // namespace

TEST_F(Cli, TimesNearTheInt64LimitsAreRefusedWithOneLine) {
    const auto f = bucketed(1);
    sql(f,
        "UPDATE OVERLAPSCOPE_KERNEL SET start = 9223372036854775000, end = 9223372036854775800 "
        "WHERE rowid = 1; UPDATE OVERLAPSCOPE_KERNEL SET start = -9223372036854775000 WHERE rowid = 2");
    for (const std::string cmd :
         {"report", "report --format json", "check --min-overlap-ratio 0.1", "export -o -", "diff"}) {
        const std::string args = cmd + " " + quote(f) + (cmd == "diff" ? " " + quote(f) : "");
        expectOneLineNaming(run(args), f, "impossible", args);
    }
}

TEST_F(Cli, ASessionStartNearTheLimitIsRefused) {
    const auto f = bucketed(1);
    sql(f, "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 9223372036854775807");
    expectOneLineNaming(run("report " + quote(f)), f, "impossible", "report");
}

TEST_F(Cli, TimesFarApartButInRangeStillGiveAPositiveWindow) {
    // 2^61 ns apart (73 years): inside the bound, and the window is that long.
    const auto f = path("far.json");
    { std::ofstream(f) << kinetoWithKernelsAt("0", "2305843009213693.952"); }
    const auto r = run("report --format json " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& totals = j["devices"][0]["totals"];
    EXPECT_GT(totals["window_ns"].get<int64_t>(), int64_t{1} << 60) << totals;
}

TEST_F(Cli, AFifoAsInputIsRefusedWithoutWaitingForAWriter) {
    const auto fifo = path("capture.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const std::string cmd : {"report", "check --min-overlap-ratio 0.1", "export -o -", "diff"}) {
        const std::string args = cmd + " " + quote(fifo) + (cmd == "diff" ? " " + quote(fifo) : "");
        expectOneLineNaming(run(args, 20), fifo, "not a regular file", args);
    }
}

TEST_F(Cli, AFifoAsBaselineIsRefusedWithoutWaitingForAWriter) {
    const auto f = bucketed(1);
    const auto fifo = path("baseline.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string args = "check --baseline " + quote(fifo) + " --max-regression 5% " + quote(f);
    expectOneLineNaming(run(args, 20), fifo, "not a regular file", args);
}

TEST_F(Cli, AViewWhereATableIsExpectedIsRefused) {
    // An endless recursive query behind a table's name: reading it never ended.
    const auto f = bucketed(1);
    sql(f,
        "ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY RENAME TO memcpy_rows;"
        "CREATE VIEW CUPTI_ACTIVITY_KIND_MEMCPY AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL "
        "SELECT i + 1 FROM c) SELECT i AS start, i + 1 AS end, 0 AS deviceId, 0 AS contextId, "
        "1 AS streamId, 0 AS correlationId, 16777216 AS globalPid, 8 AS bytes, 1 AS copyKind, "
        "0 AS srcKind, 0 AS dstKind, 0 AS srcDeviceId, 0 AS dstDeviceId FROM c");
    expectOneLineNaming(run("report " + quote(f), 30), f, "CUPTI_ACTIVITY_KIND_MEMCPY is a view", "report");
}

TEST_F(Cli, ManyDistinctDevicesReadInLinearTime) {
    // 100,000 distinct (process, device) pairs: about a second when indexed;
    // the linear search this replaced needed minutes (quadratic).
    const auto f = bucketed(1);
    sql(f,
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000) "
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, "
        "globalPid, bytes, copyKind) SELECT i * 10, i * 10 + 5, (i * 7919) % 100000, 1, 0, "
        "16777216, 8, 1 FROM c");
    const auto r = run("report --format json " + quote(f), 60);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_GE(nlohmann::json::parse(r.out)["devices"].size(), 100000u);
}

// ---- item 6: messages ----------------------------------------------------

TEST_F(Cli, ASymlinkLoopIsOneLineExitTwo) {
    const auto loop = path("loop.sqlite");
    fs::create_symlink(loop, loop);
    expectOneLineNaming(run("report " + quote(loop)), loop, "link loop", "report");
}

// Issue 29 item 7: a loop inside an input directory, and one where a
// capture is to be written, are bad input for every command that reads or
// writes there, not an internal error (exit 3, "filesystem error: ...").
TEST_F(Cli, ASymlinkLoopInADirectoryIsOneLineExitTwo) {
    const auto f = bucketed(1);
    const auto job = path("job"), partials = path("partials");
    fs::create_directories(job);
    fs::create_directories(partials);
    fs::copy_file(f, job + "/rank0.sqlite");
    ASSERT_EQ(run("report --partial -o " + quote(partials + "/rank0.partial.json") + " " + quote(f)).code, 0);
    const auto loop = job + "/rank1.sqlite", partialLoop = partials + "/rank1.partial.json";
    fs::create_symlink(loop, loop);
    fs::create_symlink(partialLoop, partialLoop);
    for (const std::string& cmd :
         std::vector<std::string>{"report", "report --format json", "check --min-overlap-ratio 0.1", "export -o -",
                                  "whatif", "diff " + quote(f)}) {
        const std::string args = cmd + " " + quote(job);
        expectOneLineNaming(run(args), loop, "link loop", args);
    }
    expectOneLineNaming(run("merge " + quote(partials)), partialLoop, "link loop", "merge");
    const auto outLoop = path("out.sqlite");
    fs::create_symlink(outLoop, outLoop);
    for (const std::string extra : {"", " --kernels 10", " --ranks 2"}) {
        const std::string args = "synth -o " + quote(outLoop) + extra;
        const auto r = run(args);
        EXPECT_EQ(r.code, 2) << args << ": " << r.err;
        EXPECT_EQ(lineCount(r.err), 1u) << args << ": " << r.err;
        EXPECT_NE(r.err.find(outLoop), std::string::npos) << args << ": " << r.err;
    }
    EXPECT_TRUE(fs::is_symlink(outLoop));
}

TEST_F(Cli, DevStdinIsNotARegularFile) {
    // run() gives the command /dev/null as stdin: a device, not a capture.
    expectOneLineNaming(run("report /dev/stdin"), "/dev/stdin", "not a regular file", "report");
}

TEST_F(Cli, AFileInAnUnsearchableDirectoryIsPermissionDenied) {
    const auto locked = path("locked");
    fs::create_directories(locked);
    const auto f = (fs::path(locked) / "run.sqlite").string();
    { std::ofstream(f) << "x"; }
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_write);
    // Root searches any directory: run as nobody then (the temp dir's parents
    // are world-searchable; only `locked` is not).
    const bool root = ::geteuid() == 0;
    if (root) fs::permissions(dir_, fs::perms::others_exec, fs::perm_options::add);
    const auto r = run((root ? "--version >/dev/null; setpriv --reuid=65534 --regid=65534 --clear-groups " +
                                   std::string(OSC_CLI_PATH) + " "
                             : std::string()) +
                       "report " + quote(f));
    fs::permissions(locked, fs::perms::owner_all);
    expectOneLineNaming(r, f, "permission denied", "report");
}

TEST_F(Cli, ControlBytesAndBrokenUtf8FromAFileNeverReachTheTerminalOrTheJson) {
    const auto f = bucketed(1);
    // Every name gets an escape sequence (clear screen), a C1 control and a
    // byte that is not UTF-8.
    sql(f, "UPDATE StringIds SET value = value || char(27) || '[2J' || char(155) || CAST(X'FF' AS TEXT)");
    for (const std::string cmd :
         {"report", "report --format markdown", "report --steps --step-pattern step --collectives",
          "check --min-overlap-ratio 0.99", "diff"}) {
        const auto r = run(cmd + " " + quote(f) + (cmd == "diff" ? " " + quote(f) : ""));
        EXPECT_LE(r.code, 1) << cmd << ": " << r.err;
        EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << cmd;
        EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << cmd;
        EXPECT_EQ(r.out.find('\xff'), std::string::npos) << cmd;
        EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << cmd;
        if (cmd.find("--steps") != std::string::npos) {
            // The step's name is shown, escaped.
            EXPECT_NE(r.out.find("step 0\\x1b[2J\\xc2\\x9b\\xff"), std::string::npos) << r.out;
        }
    }
    for (const std::string cmd : {"report --format json --collectives", "export -o -", "diff --format json"}) {
        const auto r = run(cmd + " " + quote(f) + (cmd.rfind("diff", 0) == 0 ? " " + quote(f) : ""));
        EXPECT_EQ(r.code, 0) << cmd << ": " << r.err;
        // nlohmann's parser refuses invalid UTF-8 and raw control characters.
        EXPECT_NO_THROW({
            const auto parsed = nlohmann::json::parse(r.out);
            (void)parsed;
        }) << cmd;
    }
}

TEST_F(Cli, AMessageNamingAFileEscapesItsName) {
    const auto evil = path("evil\x1b[2J\xff.sqlite");
    const auto r = run("report " + quote(evil));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\\x1b[2J\\xff"), std::string::npos) << r.err;
}

TEST_F(Cli, TextInAnIntegerColumnIsOneLineNotZero) {
    const auto f = bucketed(1);
    sql(f, "UPDATE OVERLAPSCOPE_KERNEL SET start = 'soon' WHERE rowid = 2");
    expectOneLineNaming(run("report " + quote(f)), f, "OVERLAPSCOPE_KERNEL.start holds text", "report");
    const auto g = path("blob.sqlite");
    ASSERT_EQ(run("synth --steps 1 -o " + quote(g)).code, 0);
    sql(g, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = X'00' WHERE rowid = 1");
    expectOneLineNaming(run("report " + quote(g)), g, "correlationId holds a blob", "report");
}

// ---- item 7: reading a killed capture changes nothing beside it ----------

namespace {

// Leaves `file` as a killed writer would: in WAL mode, with a committed
// transaction (dropped_records = 12345) only in the -wal, and no -shm.
void leaveCommittedWalWithoutShm(const std::string& file) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        sqlite3* db = nullptr;
        if (sqlite3_open(file.c_str(), &db) != SQLITE_OK) ::_exit(1);
        const int rc = sqlite3_exec(db,
                                    "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; "
                                    "INSERT OR REPLACE INTO OVERLAPSCOPE_META (name, value) "
                                    "VALUES ('dropped_records', '12345')",
                                    nullptr, nullptr, nullptr);
        ::_exit(rc == SQLITE_OK ? 0 : 2);  // no sqlite3_close: as if killed
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(fs::exists(file + "-wal"));
    fs::remove(file + "-shm");
}

}  // namespace

TEST_F(Cli, AKilledCaptureIsReadWithoutCreatingAShmBesideIt) {
    const auto f = bucketed(1);
    leaveCommittedWalWithoutShm(f);
    const auto walBytes = fs::file_size(f + "-wal");
    const auto r = run("report --format json " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["summary"]["dropped_records"], 12345) << "the WAL was not read";
    EXPECT_FALSE(fs::exists(f + "-shm"));
    ASSERT_TRUE(fs::exists(f + "-wal"));
    EXPECT_EQ(fs::file_size(f + "-wal"), walBytes);
}

// Issue 29 item 10: a -wal holding no valid frame (garbage, zeros) beside a
// capture, whichever journal mode its header names, is ignored as SQLite
// ignores it, and nothing beside the input changes: no -shm appears and the
// -wal is not deleted (a checkpoint on close used to delete it).
TEST_F(Cli, AGarbageWalBesideACaptureIsLeftAsItIs) {
    const auto clean = run("report --format json " + quote(bucketed(1)));
    ASSERT_EQ(clean.code, 0) << clean.err;
    const auto expected = nlohmann::json::parse(clean.out)["summary"];
    for (const bool walHeader : {false, true}) {
        for (const char fill : {'\0', '\x5a'}) {
            const auto f = path(std::string("garbage-") + (walHeader ? "wal" : "rollback") +
                                (fill == 0 ? "-zeros" : "-bytes") + ".sqlite");
            fs::copy_file(bucketed(1), f);
            if (walHeader) {
                // Bytes 18 and 19 of the header: 2 = WAL (file format).
                std::fstream db(f, std::ios::in | std::ios::out | std::ios::binary);
                db.seekp(18);
                db.put(2).put(2);
            }
            const std::string wal(5000, fill);
            { std::ofstream(f + "-wal", std::ios::binary) << wal; }
            const std::string before = slurp(f);
            const auto args = "report --format json " + quote(f);
            const auto r = run(args);
            ASSERT_EQ(r.code, 0) << args << ": " << r.err;
            EXPECT_EQ(nlohmann::json::parse(r.out)["summary"], expected) << args;
            EXPECT_FALSE(fs::exists(f + "-shm")) << args;
            ASSERT_TRUE(fs::exists(f + "-wal")) << args << ": the -wal was deleted";
            EXPECT_EQ(slurp(f + "-wal"), wal) << args;
            EXPECT_EQ(slurp(f), before) << args;
        }
    }
}

TEST_F(Cli, AKilledCaptureInADirectoryWeCannotWriteIsRead) {
    const auto dir = path("readonly");
    fs::create_directories(dir);
    const auto f = dir + "/run.sqlite";
    fs::copy_file(bucketed(1), f);
    leaveCommittedWalWithoutShm(f);
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    // Root writes anywhere: run as nobody then.
    const bool root = ::geteuid() == 0;
    if (root) fs::permissions(dir_, fs::perms::others_exec, fs::perm_options::add);
    const auto r = run((root ? "--version >/dev/null; setpriv --reuid=65534 --regid=65534 --clear-groups " +
                                   std::string(OSC_CLI_PATH) + " "
                             : std::string()) +
                       "report --format json " + quote(f));
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["summary"]["dropped_records"], 12345);
    EXPECT_FALSE(fs::exists(f + "-shm"));
}

TEST_F(Cli, AHugeStepNameNeitherCrashesNorFloodsTheTerminal) {
    // Item 3 end to end: 30,000 digits crashed std::regex; the warning that
    // names the range is cut to one readable line.
    const std::string huge = "ProfilerStep#" + std::string(30000, '0');
    const auto f = path("huge.json");
    {
        std::ofstream(f) << R"({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":")"
                         << huge << R"(","pid":0,"tid":1,"ts":0,"dur":100},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":200,"dur":50,"args":{"device":0,"stream":7,"correlation":1}}]})";
    }
    for (const std::string cmd : {"report", "check --min-overlap-ratio 0.1", "export -o -"}) {
        const auto r = run(cmd + " " + quote(f));
        EXPECT_LE(r.code, 1) << cmd << ": " << r.err.substr(0, 300);
        std::istringstream lines(r.err);
        for (std::string line; std::getline(lines, line);) EXPECT_LT(line.size(), 7000u) << cmd;
    }
}

// ---- issue 29 item 5: the same data given twice --------------------------

TEST_F(Cli, TheSameDataGivenTwiceIsRefused) {
    // Three ranks, one device each: the job alone is 3 devices.
    const auto job = path("job");
    ASSERT_EQ(run("synth -o " + quote(job) + " --ranks 3 --steps 2").code, 0);
    std::vector<std::string> ranks;
    for (const auto& e : fs::directory_iterator(job)) ranks.push_back(e.path().string());
    std::sort(ranks.begin(), ranks.end());
    ASSERT_EQ(ranks.size(), 3u);
    auto r = run("report --format json " + quote(job));
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_EQ(nlohmann::json::parse(r.out)["devices"].size(), 3u);

    const auto copy = path("copy.sqlite");
    fs::copy_file(ranks[0], copy);
    const auto p01 = path("p01.partial.json"), p12 = path("p12.partial.json"), p2 = path("p2.partial.json");
    ASSERT_EQ(run("report --partial -o " + quote(p01) + " " + quote(ranks[0]) + " " + quote(ranks[1])).code, 0);
    ASSERT_EQ(run("report --partial -o " + quote(p12) + " " + quote(ranks[1]) + " " + quote(ranks[2])).code, 0);
    ASSERT_EQ(run("report --partial -o " + quote(p2) + " " + quote(ranks[2])).code, 0);
    // (arguments, the file named, what it says)
    const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
        {"report " + quote(ranks[0]) + " " + quote(ranks[0]), ranks[0], "given twice"},
        {"report " + quote(job) + " " + quote(ranks[1]), ranks[1], "given twice"},
        {"report " + quote(job) + " " + quote(copy), copy, "also in " + ranks[0]},
        {"check --min-overlap-ratio 0 " + quote(job) + " " + quote(copy), copy, "also in " + ranks[0]},
        {"export -o - " + quote(ranks[0]) + " " + quote(ranks[0]), ranks[0], "given twice"},
        {"whatif " + quote(copy) + " " + quote(ranks[0]), ranks[0], "also in " + copy},
        {"merge " + quote(p01) + " " + quote(p01), p01, "given twice"},
        {"merge " + quote(p01) + " " + quote(p12), p12, "also in " + p01},
        {"check --min-overlap-ratio 0 " + quote(p01) + " " + quote(p12), p12, "also in " + p01},
    };
    for (const auto& [args, file, what] : cases) {
        r = run(args);
        expectOneLineNaming(r, file, what, args);
        EXPECT_TRUE(r.out.empty()) << args;
    }
    // Disjoint partials are the job.
    r = run("merge --format json " + quote(p01) + " " + quote(p2));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["devices"].size(), 3u);
    // The same process captured again later (detach, attach) is not a copy.
    sql(copy, "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + 10000000000");
    r = run("report --format json " + quote(ranks[0]) + " " + quote(copy));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["devices"].size(), 2u);
}

// ---- issue 29 item 6: saved reports with impossible numbers --------------

TEST_F(Cli, ASavedReportWithImpossibleNumbersIsRefused) {
    const auto f = bucketed(1);
    const auto good = path("good.json");
    auto r = run("report --format json -o " + quote(good) + " " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    // Ordered: "format" stays the first key, as our writer puts it.
    const auto report = nlohmann::ordered_json::parse(slurp(good));
    // (field, value, what the message says)
    const std::vector<std::tuple<nlohmann::ordered_json::json_pointer, nlohmann::ordered_json, std::string>> cases = {
        {nlohmann::ordered_json::json_pointer("/devices/0/totals/overlap_ratio"), 7,
         "devices[0].totals.overlap_ratio is 7, outside 0 to 1"},
        {nlohmann::ordered_json::json_pointer("/summary/overlap_ratio"), -3,
         "summary.overlap_ratio is -3, outside 0 to 1"},
        {nlohmann::ordered_json::json_pointer("/devices/0/totals/exposed_comm_ns"), -1000,
         "devices[0].totals.exposed_comm_ns is -1000, a negative duration"},
    };
    for (const auto& [where, value, what] : cases) {
        auto bad = report;
        ASSERT_TRUE(bad.contains(where)) << where.to_string();
        bad[where] = value;
        const auto saved = path("bad.json");
        { std::ofstream(saved) << bad.dump(2); }
        for (const std::string& args :
             std::vector<std::string>{"check --min-overlap-ratio 0.1 " + quote(saved),
                                      "check --baseline " + quote(saved) + " --max-regression 5 " + quote(f),
                                      "diff " + quote(saved) + " " + quote(good)}) {
            r = run(args);
            expectOneLineNaming(r, saved, what, args);
            EXPECT_TRUE(r.out.empty()) << args << ": " << r.out.substr(0, 200);
        }
    }
    // The report as written passes: 2/3 of the communication is hidden.
    r = run("check --min-overlap-ratio 0.6 " + quote(good));
    EXPECT_EQ(r.code, 0) << r.err;
}

// ---- issue 29 item 11: a partial whose header spans lines ----------------

TEST_F(Cli, APrettyPrintedPartialSaysSo) {
    const auto f = bucketed(1);
    const auto partial = path("run.partial.json");
    ASSERT_EQ(run("report --partial -o " + quote(partial) + " " + quote(f)).code, 0);
    const std::string text = slurp(partial);
    const size_t firstEnd = text.find('\n');
    ASSERT_NE(firstEnd, std::string::npos);
    auto header = nlohmann::ordered_json::parse(text.substr(0, firstEnd));
    const std::string rest = text.substr(firstEnd + 1);
    const auto write = [&](const std::string& name, const nlohmann::ordered_json& h, int indent) {
        const auto p = path(name);
        std::ofstream(p) << h.dump(indent) << "\n" << rest;
        return p;
    };
    const auto pretty = write("pretty.partial.json", header, 2);
    auto newerHeader = header;
    newerHeader["version"] = 99;
    const auto newer = write("newer.partial.json", newerHeader, 2);
    const auto newerCompact = write("newer-compact.partial.json", newerHeader, -1);
    for (const std::string cmd : {"merge", "check --min-overlap-ratio 0"}) {
        expectOneLineNaming(run(cmd + " " + quote(pretty)), pretty, "header spans several lines", cmd);
        expectOneLineNaming(run(cmd + " " + quote(newer)), newer, "version 99 is newer than this overlapscope", cmd);
        expectOneLineNaming(run(cmd + " " + quote(newerCompact)), newerCompact,
                            "version 99 is newer than this overlapscope", cmd);
    }
    // Written back on one line, the same header is a partial again.
    const auto back = write("back.partial.json", header, -1);
    EXPECT_EQ(run("merge " + quote(back)).code, 0);
}

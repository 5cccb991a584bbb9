// Issue 14 item 11: dropped records and unfinished captures are visible:
// report warns, check fails unless --allow-dropped, JSON carries both.
#include "cli_fixture.h"

#include <sqlite3.h>

namespace {

void setMeta(const std::string& file, const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << statement;
    sqlite3_close(db);
}

}  // namespace

TEST_F(Cli, DroppedRecordsAreWarnedFailCheckAndAreInTheJson) {
    const auto f = bucketed(1);
    setMeta(f, "INSERT OR REPLACE INTO OVERLAPSCOPE_META (name, value) VALUES ('dropped_records', '21000000')");

    auto r = run("report " + quote(f));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("dropped 21000000 records"), std::string::npos) << r.err;

    r = run("report --format json " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["devices"][0]["dropped_records"], 21000000);
    EXPECT_EQ(j["devices"][0]["end_reason"], "stopped");
    EXPECT_EQ(j["summary"]["dropped_records"], 21000000);

    // The overlap threshold holds (2/3 >= 0.5); the drop alone fails the check.
    r = run("check --min-overlap-ratio 0.5 " + quote(f));
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL rank 0 gpu 0: 21000000 records were dropped"), std::string::npos) << r.out;
    r = run("check --min-overlap-ratio 0.5 --allow-dropped " + quote(f));
    EXPECT_EQ(r.code, 0) << r.out << r.err;

    // A saved report keeps the count: checking against it as a baseline still works.
    const auto saved = path("saved.json");
    ASSERT_EQ(run("report --format json -o " + quote(saved) + " " + quote(f)).code, 0);
    r = run("check --baseline " + quote(saved) + " --max-regression 5% --allow-dropped " + quote(f));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(Cli, NoDroppedRecordsMeansNoDropCheck) {
    const auto f = bucketed(1);
    setMeta(f, "INSERT OR REPLACE INTO OVERLAPSCOPE_META (name, value) VALUES ('dropped_records', '0')");
    const auto r = run("check --min-overlap-ratio 0.5 " + quote(f));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.out, "ok: 1 checks passed on 1 device\n");
}

TEST_F(Cli, AnUnfinishedCaptureIsWarnedAndHasNoEndReason) {
    const auto f = bucketed(1);
    setMeta(f, "DELETE FROM OVERLAPSCOPE_META WHERE name = 'end_reason'");
    auto r = run("report " + quote(f));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("the capture did not finish"), std::string::npos) << r.err;
    r = run("report --format json " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["devices"][0]["end_reason"].is_null());
    EXPECT_TRUE(j["devices"][0]["dropped_records"].is_null());
}

// Issue 16 meets item 11: a partial result carries the drop and the missing
// end_reason to the merge, whose report and check say what the capture's do.
TEST_F(Cli, DropsAndUnfinishedCapturesSurviveAPartialAndItsMerge) {
    const auto f = bucketed(1);
    setMeta(f,
            "INSERT OR REPLACE INTO OVERLAPSCOPE_META (name, value) VALUES ('dropped_records', '777');"
            "DELETE FROM OVERLAPSCOPE_META WHERE name = 'end_reason'");
    const auto part = path("one.partial.json");
    auto r = run("report --partial -o " + quote(part) + " " + quote(f));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto direct = run("report --format json " + quote(f));
    const auto merged = run("merge --format json " + quote(part));
    ASSERT_EQ(merged.code, 0) << merged.err;
    EXPECT_EQ(merged.err, direct.err);  // the same two warnings
    EXPECT_NE(merged.err.find("dropped 777 records"), std::string::npos) << merged.err;
    EXPECT_NE(merged.err.find("the capture did not finish"), std::string::npos) << merged.err;
    const auto j = nlohmann::json::parse(merged.out);
    EXPECT_EQ(j["devices"][0]["dropped_records"], 777);
    EXPECT_TRUE(j["devices"][0]["end_reason"].is_null());
    EXPECT_EQ(j["summary"]["dropped_records"], 777);
    r = run("check --min-overlap-ratio 0.5 " + quote(part));
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL rank 0 gpu 0: 777 records were dropped"), std::string::npos) << r.out;
    EXPECT_EQ(run("check --min-overlap-ratio 0.5 --allow-dropped " + quote(part)).code, 0);
}

// Issue 29 item 9: a capture whose disk filled (or whose process died) as it
// started: the writer's first transaction (tables, enums, session start)
// committed and nothing after it, format_version included. It read as a
// finished capture of 0 devices, exit 0, without a word.
TEST_F(Cli, ACaptureThatSavedNothingSaysItDidNotFinish) {
    const auto f = path("nothing.sqlite");
    fs::copy_file(bucketed(1), f);
    setMeta(f,
            "DELETE FROM OVERLAPSCOPE_META; DELETE FROM OVERLAPSCOPE_KERNEL; DELETE FROM OVERLAPSCOPE_KERNEL_LAUNCH; "
            "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY; DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET; "
            "DELETE FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION; DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME; "
            "DELETE FROM NVTX_EVENTS; DELETE FROM OVERLAPSCOPE_NCCL_COLL; DELETE FROM OVERLAPSCOPE_STREAM_NAME; "
            "DELETE FROM OVERLAPSCOPE_CUDA_EVENT; DELETE FROM OVERLAPSCOPE_OBJECT_NAME; DELETE FROM PROCESSES; "
            "DELETE FROM ThreadNames; DELETE FROM TARGET_INFO_GPU; DELETE FROM StringIds");
    const std::string warning = f + ": the capture did not finish and saved nothing";
    // Issue 49 item 5: nothing to report, in one line (exit 2).
    auto r = run("report --format json " + quote(f));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.rfind("overlapscope: " + warning, 0), 0u) << r.err;
    EXPECT_NE(r.err.find("nothing to report"), std::string::npos) << r.err;
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    // A gate on it fails: nothing was measured.
    r = run("check --min-overlap-ratio 0 " + quote(f));
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(warning), std::string::npos) << r.err;
    // Its partial carries it to the merge, which has nothing to report either.
    const auto part = path("nothing.partial.json");
    ASSERT_EQ(run("report --partial -o " + quote(part) + " " + quote(f)).code, 0);
    r = run("merge " + quote(part));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("overlapscope: " + warning, 0), 0u) << r.err;
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    // Beside a capture that holds something, the report names it, and so
    // does a merge of both partials: text, JSON warnings and stderr.
    const auto good = path("good.partial.json");
    ASSERT_EQ(run("report --partial -o " + quote(good) + " " + quote(bucketed(1))).code, 0);
    for (const std::string& inputs : {quote(f) + " " + quote(bucketed(1)), std::string()}) {
        const std::string command = inputs.empty() ? "merge " + quote(part) + " " + quote(good) : "report " + inputs;
        r = run(command);
        EXPECT_EQ(r.code, 0) << command << ": " << r.err;
        EXPECT_NE(r.out.find("\nwarning: " + warning), std::string::npos) << command << ": " << r.out;
        EXPECT_NE(r.err.find("overlapscope: warning: " + warning), std::string::npos) << command << ": " << r.err;
        r = run(command + " --format json");
        ASSERT_EQ(r.code, 0) << command << ": " << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["devices"].size(), 1u);
        ASSERT_FALSE(j["warnings"].empty()) << r.out;
        EXPECT_EQ(j["warnings"][0].get<std::string>().rfind(warning, 0), 0u) << j["warnings"];
    }
    // A finished capture says nothing of the kind.
    r = run("report " + quote(bucketed(1)));
    EXPECT_EQ(r.err.find("did not finish"), std::string::npos) << r.err;
}

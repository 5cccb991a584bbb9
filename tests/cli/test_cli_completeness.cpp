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

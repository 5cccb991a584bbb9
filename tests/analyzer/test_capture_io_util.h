// Helpers shared by the capture I/O tests: raw SQL access for building files
// by hand and inspecting what was written. Each test's files go in a private
// testsupport::TempDir.
#pragma once

#include "analyzer/capture/model.h"

#include <sqlite3.h>

#include <gtest/gtest.h>

#include <string>

#include "tests/support/temp_dir.h"

namespace osc::testing_io {

// The process with this pid (a test failure, and the first, when none has it).
inline const Process& byPid(const Capture& c, int64_t pid) {
    for (const auto& p : c.processes)
        if (p.pid == pid) return p;
    ADD_FAILURE() << "no process " << pid;
    return c.processes.front();
}

// Runs SQL on a file, read-write, failing the test on error.
inline void execSql(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message << "\nin: " << sql;
}

// First column of the first row as text ("" when no row), read-only.
inline std::string querySql(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        const int rc =
            sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK ? sqlite3_step(st) : SQLITE_ERROR;
        if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
            out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            out = std::string("<error: ") + sqlite3_errmsg(db) + ">";
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
}

// Calls `row(statement)` for every row of `sql`, read-only; false when the
// file cannot be opened or the SQL does not prepare.
template <typename RowFn>
bool forEachRow(const std::string& path, const std::string& sql, RowFn row) {
    sqlite3* db = nullptr;
    bool ok = false;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        ok = sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK;
        while (ok && sqlite3_step(st) == SQLITE_ROW) row(st);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return ok;
}

// EXPLAIN QUERY PLAN's detail lines, joined by ';', read-only.
inline std::string queryPlan(const std::string& path, const std::string& sql) {
    std::string out;
    forEachRow(path, "EXPLAIN QUERY PLAN " + sql, [&](sqlite3_stmt* st) {
        out += reinterpret_cast<const char*>(sqlite3_column_text(st, 3)) + std::string(";");
    });
    return out;
}

}  // namespace osc::testing_io

// Small RAII wrappers over the SQLite C API for the capture reader and
// writer. Every failure becomes a CaptureError naming the file, with SQLite's
// result code turned into words a user can act on.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace osc::sql {

// "not a SQLite database", "the file is corrupt or truncated", ... plus
// SQLite's own message where it adds something.
std::string describe(sqlite3* db, int rc);
[[noreturn]] void fail(const std::string& path, sqlite3* db, int rc, std::string_view doing);

class Database {
public:
    Database() = default;
    // flags: SQLITE_OPEN_* ; throws CaptureError when the file cannot be opened.
    Database(const std::string& path, int flags);
    ~Database();
    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    sqlite3* get() const { return db_; }
    const std::string& path() const { return path_; }
    void exec(const char* sql);
    // Closes now and reports a failure (the destructor cannot).
    void close();

private:
    sqlite3* db_ = nullptr;
    std::string path_;
};

class Statement {
public:
    Statement() = default;
    Statement(const Database& db, std::string_view sql);
    ~Statement();
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // True while a row is available; throws CaptureError on failure.
    bool step();
    // Runs a statement that returns no rows, then resets it for reuse.
    void run();
    void reset() { sqlite3_reset(stmt_); }

    void bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
    void bindNull(int index) { sqlite3_bind_null(stmt_, index); }
    // The text must stay alive until the next step() (SQLITE_STATIC: no copy).
    void bindText(int index, std::string_view text) {
        // A default string_view has no data pointer, which SQLite would store as NULL.
        sqlite3_bind_text(stmt_, index, text.data() ? text.data() : "",
                          static_cast<int>(text.size()), SQLITE_STATIC);
    }

    int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
    bool isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
    std::string_view text(int column) const;

    sqlite3_stmt* get() const { return stmt_; }

private:
    sqlite3_stmt* stmt_ = nullptr;
    sqlite3* db_ = nullptr;
    std::string path_;
};

}  // namespace osc::sql

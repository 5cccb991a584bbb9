// Small RAII wrappers over the SQLite C API for the capture reader and
// writer. Every failure becomes a CaptureError naming the file, with SQLite's
// result code turned into words a user can act on.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <exception>
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
    // `openName`, when given, is what SQLite opens (a URI); `path` names the
    // file in messages.
    Database(const std::string& path, int flags, const std::string& openName = "");
    // Opens a capture read-only without writing anything beside it. A WAL
    // file without its -shm (a capture whose writer was killed, copied
    // without it, or in a directory we may not write) is read with the
    // wal-index in memory (the unix-none VFS: no locks; exclusive locking
    // mode) instead of a -shm SQLite would create, or fail to create; no
    // writer can be live then,
    // since a live writer keeps its -shm. Otherwise an ordinary read-only
    // open, which shares a live writer's -shm.
    static Database openForReading(const std::string& path);
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

// Thrown by integerColumn(); the loop reading the row turns it into the
// CaptureError that names the file, table and column
// (Statement::requireIntegers on the same row).
struct NotAnInteger : std::exception {
    const char* what() const noexcept override { return "a text or blob value where an integer is expected"; }
};

// sqlite3_column_int64 for the hot row loops: text or a blob that SQLite
// would silently read as 0 throws NotAnInteger. Only a 0 is checked further,
// so the common row costs one comparison per column, not a type lookup.
inline int64_t integerColumn(sqlite3_stmt* s, int column) {
    const int64_t value = sqlite3_column_int64(s, column);
    if (value == 0) [[unlikely]] {
        const int type = sqlite3_column_type(s, column);
        if (type == SQLITE_TEXT || type == SQLITE_BLOB) throw NotAnInteger{};
    }
    return value;
}

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
        sqlite3_bind_text(stmt_, index, text.data() ? text.data() : "", static_cast<int>(text.size()), SQLITE_STATIC);
    }

    int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
    // Throws CaptureError naming `table` and the column when a column in
    // [from, to) of the current row holds text or a blob: SQLite would read
    // it as 0 and the capture would be silently wrong. Cheap per row.
    void requireIntegers(int from, int to, std::string_view table) const {
        for (int c = from; c < to; ++c) {
            const int type = sqlite3_column_type(stmt_, c);
            if (type == SQLITE_TEXT || type == SQLITE_BLOB) [[unlikely]]
                failNotInteger(c, table);
        }
    }
    bool isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
    std::string_view text(int column) const;

    sqlite3_stmt* get() const { return stmt_; }
    int columnCount() const { return sqlite3_column_count(stmt_); }

private:
    [[noreturn]] void failNotInteger(int column, std::string_view table) const;
    sqlite3_stmt* stmt_ = nullptr;
    sqlite3* db_ = nullptr;
    std::string path_;
};

}  // namespace osc::sql
